"""On a terminal the device-code login shows a QR code of the verification URL (when the terminal
is wide enough) and a countdown to the code's expiry; none of it goes to a pipe."""
import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
import unittest

from flows import FlowTestCase
from harness import TOKENBROKER

QR_BLOCKS = ("█", "▀", "▄")


class DeviceCodeTerminalTest(FlowTestCase):
    emulator_options = {"device_code_interval": 1}

    def login_on_pty(self, columns):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        p = subprocess.Popen([TOKENBROKER, "login", "work", "--device-code"], stdin=slave,
                             stdout=subprocess.PIPE, stderr=slave, env=self.env())
        os.close(slave)
        text = ""
        deadline = time.time() + 30
        while "left" not in text and time.time() < deadline:  # the countdown has started
            if select.select([master], [], [], 0.2)[0]:
                text += os.read(master, 65536).decode(errors="replace")
        time.sleep(1.2)  # one more tick
        while select.select([master], [], [], 0.2)[0]:
            text += os.read(master, 65536).decode(errors="replace")
        self.emu.approve()
        out, _ = p.communicate(timeout=60)
        try:
            while select.select([master], [], [], 0.2)[0]:
                text += os.read(master, 65536).decode(errors="replace")
        except OSError:
            pass
        os.close(master)
        return p.returncode, out, text

    def test_wide_terminal_shows_qr_code_and_countdown(self):
        rc, out, text = self.login_on_pty(columns=120)
        self.assertEqual(rc, 0, text)
        self.assertIn(b"signed in to work as", out)
        self.assertIn("enter the code", text)
        self.assertTrue(any(b in text for b in QR_BLOCKS), text)
        self.assertRegex(text, r"waiting for the code, \d+:\d\d left")
        self.assertGreaterEqual(text.count(" left ("), 2, "the countdown ticks")

    def test_narrow_terminal_gets_no_qr_code(self):
        rc, _, text = self.login_on_pty(columns=30)
        self.assertEqual(rc, 0, text)
        self.assertFalse(any(b in text for b in QR_BLOCKS), text)
        self.assertIn("left", text)

    def test_a_pipe_gets_neither(self):
        rc, out, err = self.login()
        self.assertEqual(rc, 0, err)
        text = err.decode()
        self.assertFalse(any(b in text for b in QR_BLOCKS), text)
        self.assertNotIn(" left", text)
        self.assertNotIn("\r", text)


if __name__ == "__main__":
    unittest.main()
