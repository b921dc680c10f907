"""A real desktop notification server for the tests of interface.md §8.1: Debian's dunst on an Xvfb
display, on the test's private session bus, driven as the user drives it with `dunstctl`; and a
record of every `org.freedesktop.Notifications` call on that bus, read with dbus-monitor.
"""
import os
import re
import subprocess
import time

NAME = "org.freedesktop.Notifications"


class Xvfb:
    """An X server without a screen; `display` is its `:N`."""

    def __init__(self):
        read, write = os.pipe()
        self.proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-nolisten", "tcp", "-screen", "0", "640x480x24"],
                                     pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        number = b""
        deadline = time.time() + 60
        while not number.endswith(b"\n") and time.time() < deadline:
            chunk = os.read(read, 16)
            if not chunk:
                break
            number += chunk
        os.close(read)
        if not number.strip():
            self.close()
            raise RuntimeError("Xvfb did not start")
        self.display = ":" + number.decode().strip()

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Dunst:
    """dunst on `bus` (harness.Bus) and its own Xvfb, with no configuration of the user's."""

    def __init__(self, bus, directory):
        self.bus = bus
        self.xvfb = Xvfb()
        os.makedirs(directory, exist_ok=True)
        env = dict(bus.env(), DISPLAY=self.xvfb.display, XDG_CONFIG_HOME=directory)
        self.log = open(os.path.join(directory, "dunst.log"), "wb")
        self.proc = subprocess.Popen(["dunst"], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        bus.wait_for_name(NAME, timeout=60)

    def ctl(self, *args):
        r = subprocess.run(["dunstctl"] + list(args), env=self.bus.env(), capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise RuntimeError("dunstctl %s: %s" % (" ".join(args), r.stderr))
        return r.stdout

    def displayed(self):
        return int(self.ctl("count", "displayed").strip())

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.xvfb.close()


class NotifyCalls:
    """Every method call to the notification interface on `bus`, and every signal of it, as
    dbus-monitor prints them (its text, one block per message)."""

    def __init__(self, bus, path):
        self.path = path
        self.out = open(path, "wb")
        self.proc = subprocess.Popen(
            ["dbus-monitor", "--address", bus.address, "interface='%s'" % NAME],
            stdout=self.out, stderr=subprocess.DEVNULL)
        # dbus-monitor prints its own NameAcquired/NameLost first once it is a monitor.
        deadline = time.time() + 30
        while time.time() < deadline and b"NameLost" not in self.text().encode():
            time.sleep(0.05)

    def text(self):
        with open(self.path, "rb") as f:
            return f.read().decode(errors="replace")

    def blocks(self, member):
        """The messages of `member` (Notify, CloseNotification, ActionInvoked, ...), each its text."""
        parts = re.split(r"\n(?=(?:method call|signal|method return|error) time=)", self.text())
        return [p for p in parts if p.split("\n", 1)[0].endswith("member=" + member)]

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.out.close()
