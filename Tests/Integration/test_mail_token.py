"""`token get --for imap|pop|smtp` and `--format xoauth2 | oauthbearer` (README, "Mail clients"):
the mail token is the same sign-in's refresh token asked for Exchange Online's scopes, one token
for every protocol in the account's `mail` key (so IMAP and SMTP share one refresh), a consent
refusal exits 3 naming the scopes, the `mail` key and the `login --scope` that consents, and the SASL strings decode to RFC 7628's and
XOAUTH2's shapes."""
import base64
import json
import smtplib
import socket
import ssl
import unittest

from flows import BrowserFlows, FlowTestCase
from mail_server import MailTestCase

IMAP = "https://outlook.office.com/IMAP.AccessAsUser.All"
SMTP = "https://outlook.office.com/SMTP.Send"


class MailTokenTest(BrowserFlows, FlowTestCase):
    emulator_options = {"device_code_interval": 1}

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config(extra_account="mail = imap smtp\n"))
        self.signed_in()

    def token(self, *args, status=0):
        r = self.run_broker("token", "get", "work", *args, timeout=30)
        self.assertEqual(r.returncode, status, r.stderr)
        return r

    def test_imap_and_smtp_share_one_token_and_one_refresh(self):
        before = len(self.refresh_requests())
        imap = self.token("--for", "imap").stdout.decode().strip()
        smtp = self.token("--for", "smtp").stdout.decode().strip()
        self.assertEqual(imap, smtp)
        self.assertEqual(len(self.refresh_requests()), before + 1)
        claims = self.emu.validate_access_token(imap)
        self.assertEqual(set(claims["scope"].split()) & {IMAP, SMTP}, {IMAP, SMTP}, claims)
        # The account's own token (Graph) is another one, from the same refresh token.
        graph = self.token().stdout.decode().strip()
        self.assertNotEqual(graph, imap)
        self.assertNotIn(IMAP, self.emu.validate_access_token(graph)["scope"])
        self.assert_no_secret_leak()

    def test_sasl_strings(self):
        token = self.token("--for", "imap").stdout.decode().strip()
        user = self.emu.validate_access_token(token)["username"]
        xoauth2 = base64.b64decode(self.token("--for", "imap", "--format", "xoauth2").stdout.strip()).decode()
        self.assertEqual(xoauth2, "user=%s\x01auth=Bearer %s\x01\x01" % (user, token))
        bearer = self.token("--for", "smtp", "--format", "oauthbearer", "--user", "shared@contoso.example",
                            "--host", "smtp.office365.com", "--port", "587").stdout.strip()
        self.assertEqual(base64.b64decode(bearer).decode(),
                         "n,a=shared@contoso.example,\x01host=smtp.office365.com\x01port=587\x01auth=Bearer %s\x01\x01"
                         % token)

    def test_a_protocol_without_consent_exits_3_naming_the_mail_key_and_login(self):
        """Entra answers a scope the user never consented to with invalid_grant, AADSTS65001 and
        suberror consent_required: exit 3, the refresh token kept, and the line says how to get it."""
        self.write_config(self.default_config())  # no mail key: the sign-in asked no mail consent
        rt = self.stored_refresh_token()
        self.emu.add_fault("json", "token", grant_type="refresh_token", status=400, body={
            "error": "invalid_grant", "suberror": "consent_required", "error_codes": [65001],
            "error_description": "AADSTS65001: The user or administrator has not consented to use the application."})
        r = self.token("--for", "pop", status=3)
        line = r.stderr.decode()
        self.assertIn("has no consent for https://outlook.office.com/POP.AccessAsUser.All", line)
        self.assertIn("add 'mail = pop' to [account work], then run 'tokenbroker login work --scope "
                      "https://outlook.office.com/POP.AccessAsUser.All' to consent", line)
        self.assertEqual(self.stored_refresh_token(), rt)
        self.assertEqual(r.stdout, b"")

    def test_google_names_the_scope_to_add_since_its_refresh_token_carries_only_its_own(self):
        """Google refuses a refresh for a scope its sign-in did not grant (invalid_scope): the line
        says to add it to the account's scopes and sign in again, not `login --scope` alone, whose
        refresh token would lose the account's other scopes."""
        self.write_config(self.default_config() + self.google_config())
        p = self.start_login("g")
        dc = self.wait_for_device_code(0, endpoint="google.devicecode")
        self.emu.approve(dc["user_code"])
        self.assertEqual(self.finish(p, 90).returncode, 0)
        self.emu.add_fault("json", "google.token", grant_type="refresh_token", status=400,
                           body={"error": "invalid_scope", "error_description": "Bad Request"})
        r = self.run_broker("token", "get", "g", "--for", "imap", timeout=30)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn(b"add 'mail = imap' to [account g], then add https://mail.google.com/ to its scopes, "
                      b"then run 'tokenbroker login g' to consent", r.stderr)

    def test_azure_invalid_scope_is_a_configuration_error_not_missing_consent(self):
        """Entra's invalid_scope (AADSTS70011: a malformed scope, or .default beside other scopes of
        its resource) is not a consent Entra wants: it says what to check, exit 1, and no login
        would cure it; the refresh token is kept."""
        rt = self.stored_refresh_token()
        self.emu.add_fault("json", "token", grant_type="refresh_token", status=400, body={
            "error": "invalid_scope", "error_codes": [70011],
            "error_description": "AADSTS70011: The provided value for the input parameter 'scope' is not valid."})
        r = self.token("--for", "imap", status=1)
        self.assertNotIn(b"consent", r.stderr)
        self.assertIn(b"(invalid_scope", r.stderr)
        self.assertIn(b"check the scopes", r.stderr)
        self.assertEqual(self.stored_refresh_token(), rt)

    def test_usage(self):
        for args in (["--for", "imap", "--scope", "x"], ["--for", "imaps"], ["--format", "xoauth2", "--port", "1"],
                     ["--user", "u"]):
            r = self.token(*args, status=64)
            self.assertTrue(r.stderr.startswith(b"error: "), r.stderr)


class SASLStringsAtDovecotTest(MailTestCase):
    """The strings `--format xoauth2 | oauthbearer` print, sent as they are (SASL-IR) in IMAP's
    AUTHENTICATE (RFC 3501 §6.2.2, RFC 4959) and SMTP's AUTH (RFC 4954) to Dovecot, whose `passdb
    oauth2` takes them apart and checks the token at the emulator: admitted; a Graph token's string
    from the same sign-in is refused."""

    def token(self, *args):
        r = self.run_broker("token", "get", "work", *args, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.decode().strip()

    def tls(self):
        return ssl.create_default_context(cafile=self.ca_file)

    def imap_authenticate(self, mechanism, sasl):
        """The tagged answer to `a1 AUTHENTICATE MECHANISM SASL` over IMAPS; an error challenge
        (`+ …`, RFC 7628 §3.2.3) is answered with the empty response the mechanism asks for."""
        with socket.create_connection(("127.0.0.1", self.server.imaps), timeout=30) as raw, \
                self.tls().wrap_socket(raw, server_hostname="mail.example.test") as conn:
            lines = conn.makefile("rb")
            self.assertTrue(lines.readline().startswith(b"* OK"))
            conn.sendall(b"a1 AUTHENTICATE %s %s\r\n" % (mechanism.encode(), sasl.encode()))
            while True:
                line = lines.readline()
                self.assertTrue(line, "Dovecot closed the connection: " + self.server.log())
                if line.startswith(b"+"):
                    conn.sendall(b"\r\n")
                elif line.startswith(b"a1 "):
                    return line.decode()

    def smtp_auth(self, mechanism, sasl):
        """The reply code to `AUTH MECHANISM SASL` on the submission service after STARTTLS."""
        with smtplib.SMTP("127.0.0.1", self.server.submission, timeout=30) as smtp:
            smtp.starttls(context=self.tls())
            smtp.ehlo()
            code, _ = smtp.docmd("AUTH", "%s %s" % (mechanism, sasl))
            if code == 334:  # the error challenge: an empty response ends the exchange
                code, _ = smtp.docmd("")
            return code

    def test_the_printed_strings_are_admitted_by_imap_and_smtp(self):
        xoauth2 = self.token("--for", "imap", "--format", "xoauth2")
        self.assertTrue(self.imap_authenticate("XOAUTH2", xoauth2).startswith("a1 OK"))
        self.assertEqual(self.smtp_auth("XOAUTH2", self.token("--for", "smtp", "--format", "xoauth2")), 235)
        bearer = self.token("--for", "imap", "--format", "oauthbearer", "--host", "127.0.0.1",
                            "--port", str(self.server.imaps))
        self.assertTrue(self.imap_authenticate("OAUTHBEARER", bearer).startswith("a1 OK"))
        bearer = self.token("--for", "smtp", "--format", "oauthbearer", "--host", "127.0.0.1",
                            "--port", str(self.server.submission))
        self.assertEqual(self.smtp_auth("OAUTHBEARER", bearer), 235)
        self.assertEqual(self.smtp_auth("OAUTHBEARER", self.token("--for", "smtp", "--format", "oauthbearer")), 235)

    def test_a_graph_tokens_string_is_refused(self):
        graph = self.token("--format", "xoauth2")
        self.assertTrue(self.imap_authenticate("XOAUTH2", graph).startswith("a1 NO"))
        self.assertEqual(self.smtp_auth("XOAUTH2", graph), 535)


if __name__ == "__main__":
    unittest.main()
