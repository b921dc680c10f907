"""Mail clients with tokenbroker's mail token against Debian's Dovecot (README, "Mail clients"):
IMAP and POP over implicit TLS and the submission service over STARTTLS, `passdb oauth2` checking
every token at the emulator, which takes only tokens carrying Exchange Online's IMAP scope (as
Exchange refuses a Graph token). curl reads over IMAP and POP, and msmtp and curl send through
submission with `token get --for smtp` as the password command; the message reaches the relay."""
import os
import subprocess
import time
import unittest

from harness import TOKENBROKER
from mail_server import MailTestCase



class MailClientsTest(MailTestCase):

    def setUp(self):
        super().setUp()
        self.user = self.emu.validate_access_token(self.token("--for", "imap"))["username"]

    def token(self, *args):
        r = self.run_broker("token", "get", "work", *args, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.decode().strip()

    def curl(self, url, token, *args):
        return subprocess.run(["curl", "-sS", "--cacert", self.ca_file, "--user", self.user, "--oauth2-bearer", token,
                               url, *args], capture_output=True, timeout=60, env=self.env())

    def test_curl_reads_over_imap_and_pop_with_the_mail_token_and_a_graph_token_is_refused(self):
        mail = self.token("--for", "imap")
        r = self.curl("imaps://127.0.0.1:%d/" % self.server.imaps, mail, "-X", 'LIST "" "*"')
        self.assertEqual(r.returncode, 0, r.stderr + self.server.log().encode())
        self.assertIn(b"INBOX", r.stdout)
        r = self.curl("pop3s://127.0.0.1:%d/" % self.server.pop3s, mail)
        self.assertEqual(r.returncode, 0, r.stderr)
        graph = self.token()
        r = self.curl("imaps://127.0.0.1:%d/" % self.server.imaps, graph, "-X", 'LIST "" "*"')
        self.assertEqual(r.returncode, 67, r.stderr)  # CURLE_LOGIN_DENIED

    def test_msmtp_sends_through_submission_with_the_password_command(self):
        """msmtp's own OAUTHBEARER and XOAUTH2, the token from `passwordeval`; each message is
        relayed, whole, to the sink behind Dovecot."""
        for mechanism in ("oauthbearer", "xoauth2"):
            config = os.path.join(self.tmp, "msmtprc-" + mechanism)
            with open(config, "w") as f:
                f.write("account default\nhost 127.0.0.1\nport %d\ntls on\ntls_starttls on\ntls_trust_file %s\n"
                        "auth %s\nuser %s\nfrom %s\npasswordeval \"%s token get work --for smtp --min-valid 300\"\n"
                        % (self.server.submission, self.ca_file, mechanism, self.user, self.user, TOKENBROKER))
            os.chmod(config, 0o600)
            message = "Subject: by %s\r\n\r\nhello\r\n" % mechanism
            r = subprocess.run(["msmtp", "-C", config, "bob@example.test"], input=message.encode(),
                               capture_output=True, timeout=60, env=self.env())
            self.assertEqual(r.returncode, 0, r.stderr + self.server.log().encode())
        subjects = [m["data"] for m in self.server.sink.messages]
        self.assertEqual(len(subjects), 2, subjects)
        self.assertIn(b"Subject: by oauthbearer", subjects[0])
        self.assertIn(b"Subject: by xoauth2", subjects[1])

    def test_three_clients_at_once_after_expiry_cause_one_refresh(self):
        """msmtp sending and curl reading IMAP and POP at once, the mail token expired and the
        refresh reply slowed by a second (without the delay a missing single flight would pass):
        one refresh at the provider, and IMAP and SMTP served by one token."""
        self.emu.configure(access_token_lifetime=2)
        self.token("--for", "imap", "--force-refresh")
        self.emu.configure(access_token_lifetime=3600)
        time.sleep(2.2)
        self.emu.add_fault("delay", "token", grant_type="refresh_token", seconds=1.5)
        before = len(self.refresh_requests())
        config = os.path.join(self.tmp, "msmtprc")
        with open(config, "w") as f:
            f.write("account default\nhost 127.0.0.1\nport %d\ntls on\ntls_starttls on\ntls_trust_file %s\n"
                    "auth oauthbearer\nuser %s\nfrom %s\npasswordeval \"%s token get work --for smtp\"\n"
                    % (self.server.submission, self.ca_file, self.user, self.user, TOKENBROKER))
        os.chmod(config, 0o600)
        reader = ("t=$(%s token get work --for imap) && curl -sS --cacert %s --user %s --oauth2-bearer \"$t\" %s"
                  % (TOKENBROKER, self.ca_file, self.user, "%s"))
        procs = [
            subprocess.Popen(["msmtp", "-C", config, "bob@example.test"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env()),
            subprocess.Popen(["sh", "-c", reader % ("imaps://127.0.0.1:%d/" % self.server.imaps)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env()),
            subprocess.Popen(["sh", "-c", reader % ("pop3s://127.0.0.1:%d/" % self.server.pop3s)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env()),
        ]
        results = [p.communicate(input=b"Subject: at once\r\n\r\nhi\r\n" if i == 0 else None, timeout=60)
                   for i, p in enumerate(procs)]
        for p, (out, err) in zip(procs, results):
            self.assertEqual(p.returncode, 0, err + self.server.log().encode())
        self.assertEqual(len(self.refresh_requests()) - before, 1)
        self.assertEqual(len(self.server.sink.messages), 1)

    def test_curl_sends_over_smtp(self):
        body = os.path.join(self.tmp, "mail.txt")
        with open(body, "w") as f:
            f.write("Subject: by curl\r\n\r\nhello\r\n")
        r = self.curl("smtp://127.0.0.1:%d/" % self.server.submission, self.token("--for", "smtp"), "--ssl-reqd",
                      "--mail-from", self.user, "--mail-rcpt", "bob@example.test", "--upload-file", body)
        self.assertEqual(r.returncode, 0, r.stderr + self.server.log().encode())
        self.assertEqual(len(self.server.sink.messages), 1)
        self.assertIn(b"Subject: by curl", self.server.sink.messages[0]["data"])


if __name__ == "__main__":
    unittest.main()
