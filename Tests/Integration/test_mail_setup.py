"""`tokenbroker mail setup ACCOUNT CLIENT` (README, "Mail clients"): each configuration it
prints, used as it is by the real client against Debian's Dovecot (mail_server.py), with the
servers given by --imap and --smtp and only the CA bundle line changed to the test's CA."""
import os
import shutil
import subprocess
import unittest

from harness import TOKENBROKER
from mail_server import MailTestCase

SYSTEM_CA = "/etc/ssl/certs/ca-certificates.crt"


class MailSetupTest(MailTestCase):

    def setup_for(self, client, host="127.0.0.1"):
        r = self.run_broker("mail", "setup", "work", client, "--imap", "%s:%d" % (host, self.server.imaps),
                            "--smtp", "%s:%d" % (host, self.server.submission))
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stdout.decode()
        self.assertIn(SYSTEM_CA, text)
        self.assertIn(TOKENBROKER + " token get work --for", text)  # by absolute path
        return text.replace(SYSTEM_CA, self.ca_file)

    def write(self, name, text):
        path = os.path.join(self.home, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o600)
        return path

    def test_msmtp(self):
        self.write(".msmtprc", self.setup_for("msmtp"))
        r = subprocess.run(["msmtp", "bob@example.test"], input=b"Subject: msmtp setup\r\n\r\nhi\r\n",
                           capture_output=True, timeout=60, env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr + self.server.log().encode())
        self.assertIn(b"Subject: msmtp setup", self.server.sink.messages[0]["data"])

    def test_curl(self):
        lines = [l for l in self.setup_for("curl").splitlines() if not l.startswith("#")]
        script = "\n".join(lines) + "\n"
        with open(os.path.join(self.tmp, "mail.txt"), "w") as f:
            f.write("Subject: curl setup\r\n\r\nhi\r\n")
        r = subprocess.run(["sh", "-e", "-c", script], capture_output=True, timeout=60, env=self.env(), cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr + self.server.log().encode())
        self.assertIn(b"INBOX", r.stdout)
        self.assertIn(b"Subject: curl setup", self.server.sink.messages[0]["data"])

    @unittest.skipUnless(shutil.which("mbsync"), "isync is not installed (make deps)")
    def test_mbsync(self):
        # mbsync matches the certificate's DNS names only, not its IP addresses.
        self.write(".mbsyncrc", self.setup_for("mbsync", host="localhost"))
        os.makedirs(os.path.join(self.home, "Mail", "work"), exist_ok=True)
        r = subprocess.run(["mbsync", "-a"], capture_output=True, timeout=120, env=self.env())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr + self.server.log().encode())
        self.assertTrue(os.path.isdir(os.path.join(self.home, "Mail", "work", "INBOX", "cur")))

    @unittest.skipUnless(shutil.which("neomutt"), "neomutt is not installed (make deps)")
    def test_neomutt_sends_in_batch_mode(self):
        rc = self.write(os.path.join(".config", "neomutt", "neomuttrc"), self.setup_for("neomutt"))
        r = subprocess.run(["neomutt", "-n", "-F", rc, "-s", "neomutt setup", "bob@example.test"], input=b"hi\n",
                           capture_output=True, timeout=60, env=self.env(TERM="dumb"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr + self.server.log().encode())
        self.assertIn(b"Subject: neomutt setup", self.server.sink.messages[0]["data"])

    def test_declined_and_unknown_clients_and_no_servers(self):
        r = self.run_broker("mail", "setup", "work", "fetchmail")
        self.assertEqual(r.returncode, 64)
        self.assertIn(b"fetchmail 6.4 (Debian 12) has no OAuth", r.stderr)
        r = self.run_broker("mail", "setup", "work", "pine")
        self.assertEqual(r.returncode, 64)
        self.assertIn(b"unknown mail client 'pine'", r.stderr)
        default = self.run_broker("mail", "setup", "work", "msmtp")
        self.assertIn(b"host smtp.office365.com\nport 587\n", default.stdout)
        self.assertIn(b"auth xoauth2\n", default.stdout)


if __name__ == "__main__":
    unittest.main()
