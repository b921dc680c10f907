"""Debian's Dovecot on loopback for the mail tests: IMAP (implicit TLS), POP3 (implicit TLS) and
its submission service (STARTTLS), every login checked with `passdb oauth2` against the
emulator's token introspection (`/_control/introspect`, which can require a scope, as Exchange
Online requires its own), and an SMTP sink behind submission that keeps each relayed message.

Dovecot changes to its service users (dovecot, dovenull) and the mail user (nobody), so it needs
root: `MailServer.available()` says why not otherwise."""
import os
import shutil
import socket
import socketserver
import subprocess
import threading
import tempfile
import time
import unittest

from flows import FlowTestCase

# The scope the mail server requires of every token: Exchange Online's for IMAP.
IMAP_SCOPE = "https://outlook.office.com/IMAP.AccessAsUser.All"

CONFIG = """\
base_dir = {dir}/run
state_dir = {dir}/state
log_path = {dir}/dovecot.log
protocols = imap pop3 submission
listen = 127.0.0.1
ssl = required
ssl_cert = <{cert}
ssl_key = <{key}
auth_mechanisms = xoauth2 oauthbearer
mail_location = maildir:{dir}/mail/%u
default_internal_user = dovecot
default_login_user = dovenull
first_valid_uid = {uid}
last_valid_uid = {uid}
hostname = mail.example.test
submission_relay_host = 127.0.0.1
submission_relay_port = {sink}
service imap-login {{
  inet_listener imap {{
    port = 0
  }}
  inet_listener imaps {{
    port = {imaps}
    ssl = yes
  }}
}}
service pop3-login {{
  inet_listener pop3 {{
    port = 0
  }}
  inet_listener pop3s {{
    port = {pop3s}
    ssl = yes
  }}
}}
service submission-login {{
  inet_listener submission {{
    port = {submission}
  }}
}}
passdb {{
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = {dir}/oauth2.conf
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={dir}/mail/%u
}}
"""

OAUTH2 = """\
introspection_mode = get
introspection_url = {introspect}
username_attribute = username
active_attribute = active
active_value = true
tls_ca_cert_file = {ca}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _SinkHandler(socketserver.StreamRequestHandler):
    """Just enough SMTP (RFC 5321) to take what Dovecot's submission service relays."""

    def reply(self, line):
        self.wfile.write(line.encode() + b"\r\n")

    def handle(self):
        self.reply("220 sink.example.test ESMTP")
        sender, recipients = None, []
        while True:
            line = self.rfile.readline()
            if not line:
                return
            verb = line[:4].upper()
            if verb in (b"EHLO", b"HELO"):
                self.reply("250 sink.example.test")
            elif verb == b"MAIL":
                sender, recipients = line.decode().strip(), []
                self.reply("250 OK")
            elif verb == b"RCPT":
                recipients.append(line.decode().strip())
                self.reply("250 OK")
            elif verb == b"DATA":
                self.reply("354 go ahead")
                data = b""
                while not data.endswith(b"\r\n.\r\n"):
                    chunk = self.rfile.readline()
                    if not chunk:
                        return
                    data += chunk
                self.server.messages.append({"from": sender, "to": recipients, "data": data[:-5]})
                self.reply("250 OK queued")
            elif verb == b"QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("250 OK")


class SMTPSink(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _SinkHandler)
        self.messages = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self):
        return self.server_address[1]

    def stop(self):
        self.shutdown()
        self.server_close()


class MailServer:
    """Dovecot in `directory`, checking tokens at `introspect` (the token is appended)."""

    @staticmethod
    def available():
        """None when Dovecot can run here, else why not (for a skip message)."""
        if not shutil.which("dovecot"):
            return "Dovecot is not installed (make deps installs dovecot-imapd, -pop3d, -submissiond)"
        if os.geteuid() != 0:
            return "Dovecot changes to its own service users: the mail tests need root"
        return None

    def __init__(self, directory, introspect, ca_file, cert, key):
        self.dir = directory
        self.sink = SMTPSink()
        self.imaps, self.pop3s, self.submission = free_port(), free_port(), free_port()
        for sub in ("run", "state", "mail"):
            os.makedirs(os.path.join(directory, sub), exist_ok=True)
        os.chmod(os.path.join(directory, "mail"), 0o777)
        with open(os.path.join(directory, "oauth2.conf"), "w") as f:
            f.write(OAUTH2.format(introspect=introspect, ca=ca_file))
        self.config = os.path.join(directory, "dovecot.conf")
        with open(self.config, "w") as f:
            f.write(CONFIG.format(dir=directory, cert=cert, key=key, uid=65534, gid=65534, sink=self.sink.port,
                                  imaps=self.imaps, pop3s=self.pop3s, submission=self.submission))
        self.process = subprocess.Popen(["dovecot", "-F", "-c", self.config], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        deadline = time.time() + 20
        for port in (self.imaps, self.pop3s, self.submission):
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if self.process.poll() is not None or time.time() > deadline:
                        raise RuntimeError("Dovecot did not start: " + self.log())
                    time.sleep(0.05)

    @classmethod
    def for_test(cls, case):
        """A server for `case` (a BrokerTestCase: its emulator, CA and server certificate), in a
        directory of its own that Dovecot's service users can read, stopped and removed at the
        end of the test."""
        directory = tempfile.mkdtemp(prefix="tb-dovecot-")
        os.chmod(directory, 0o755)
        case.addCleanup(shutil.rmtree, directory, True)
        ca = os.path.join(directory, "ca.pem")
        shutil.copy(case.ca_file, ca)
        os.chmod(ca, 0o644)
        certs = os.path.dirname(case.ca_file)
        server = cls(directory, "%s/_control/introspect?scope=%s&token=" % (case.emu.base_url, IMAP_SCOPE), ca,
                     os.path.join(certs, "server.pem"), os.path.join(certs, "server.key"))
        case.addCleanup(server.stop)
        return server

    def log(self):
        try:
            with open(os.path.join(self.dir, "dovecot.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.sink.stop()


@unittest.skipIf(MailServer.available(), MailServer.available())
class MailTestCase(FlowTestCase):
    """An account `work` with `mail = imap smtp`, signed in, and a Dovecot (`self.server`)."""
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config(extra_account="mail = imap smtp\n"))
        self.signed_in()
        self.server = MailServer.for_test(self)
