"""One desktop notification per account whose sign-in died (interface.md §8.1), posted by the
agent through org.freedesktop.Notifications to a real server: Debian's dunst on Xvfb in the
test's private D-Bus session, driven with dunstctl; every call on the interface read with
dbus-monitor. Without a server, or with `notify = off`: no notification, the same answer, no hang.
"""
import json
import os
import re
import subprocess
import time
import unittest

from agent_flows import GIT_GET
from dead_grant import ANSWER_BOUND, LINE_START, DeadGrantTestCase
from flows import BrowserFlows
from harness import TOKENBROKER
from notification_server import Dunst, NotifyCalls

CALLERS = 20


class NotificationTestCase(DeadGrantTestCase):
    """A bus that activates nothing (an activated dunst would have no display), with dunst
    started on it unless `server` is False."""
    server = True
    activation = False

    def setUp(self):
        super().setUp()
        if self.server:
            self.dunst = Dunst(self.bus, os.path.join(self.tmp, "dunst"))
            self.addCleanup(self.dunst.close)
        self.calls = NotifyCalls(self.bus, os.path.join(self.tmp, "monitor.txt"))
        self.addCleanup(self.calls.close)

    def git_fills(self, count=CALLERS, env=None):
        results = self.run_callers(["git", "credential", "fill"], count, input=GIT_GET.encode(), env=env)
        for r, seconds in results:
            self.assertLess(seconds, ANSWER_BOUND, r.stderr)
            self.assertEqual(r.returncode, 128, r.stderr)
            self.assertTrue(r.stderr.decode().startswith(LINE_START), r.stderr)
            self.assertIn(b"told us to quit", r.stderr)
        self.assertEqual(self.launched(), [], "no askpass and no browser")
        return results

    def notify_calls(self):
        return [b for b in self.calls.blocks("Notify") if b.startswith("method call")]

    def assert_no_secret_in_notifications(self):
        text = self.calls.text()
        for secret in self.known_secrets():
            self.assertNotIn(secret, text)


class OneNotificationTest(NotificationTestCase):

    def test_twenty_callers_post_one_notification(self):
        results = self.git_fills()
        self.wait_until(lambda: self.status()["state"] == "sign-in-pending", timeout=60, what="sign-in-pending")
        notify, = self.notify_calls()
        self.assertEqual(self.dunst.displayed(), 1)
        # app_name, replaces_id 0, summary, body (provider and identity), the three actions,
        # urgency 2 and resident, never expires.
        strings = re.findall(r'string "([^"]*)"', notify)
        self.assertEqual(strings[:5], ["tokenbroker", "", "Sign-in needed: work", "azure: user1@example.test", "default"])
        self.assertEqual(strings[5:], ["Sign in", "signin", "Sign in", "dismiss", "Not now", "urgency", "resident"])
        self.assertIn("uint32 0", notify)
        self.assertRegex(notify, r"byte 2")
        self.assertRegex(notify, r"boolean true")
        self.assertTrue(notify.rstrip().endswith("int32 0"), notify)
        # Later callers are told a notification was sent; still one notification.
        later = self.run_broker("token", "get", "work", env=self.caller_env())
        self.assertEqual(later.returncode, 3, later.stderr)
        self.assertIn(b"; a notification was sent; run 'tokenbroker login work'", later.stderr)
        self.git_fills(5)
        self.assertEqual(len(self.notify_calls()), 1)
        self.assertEqual(self.dunst.displayed(), 1)
        self.assertEqual(len(self.refresh_requests()), 1)
        self.assert_no_secret_in_notifications()
        self.assert_no_secret_leak(*(r for r, _ in results))

    def test_a_login_closes_the_notification(self):
        self.git_fills(3)
        self.wait_until(lambda: self.dunst.displayed() == 1, timeout=60, what="the notification")
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.wait_until(lambda: self.dunst.displayed() == 0, timeout=60, what="the notification closed")
        self.assertEqual(len(self.calls.blocks("CloseNotification")), 1)
        fill = self.run_callers(["git", "credential", "fill"], 1, input=GIT_GET.encode())[0][0]
        self.assertEqual(fill.returncode, 0, fill.stderr)


class ClickAndDismissTest(NotificationTestCase, BrowserFlows):
    """The user answers the notification with dunstctl: `action` clicks it (its default action),
    `close` dismisses it."""

    def posted(self):
        self.git_fills(3)
        self.wait_until(lambda: self.dunst.displayed() == 1, timeout=60, what="the notification")
        self.wait_until(lambda: self.status()["state"] == "sign-in-pending", timeout=60, what="sign-in-pending")

    def served(self):
        fill = self.run_callers(["git", "credential", "fill"], 1, input=GIT_GET.encode())[0][0]
        self.assertEqual(fill.returncode, 0, fill.stderr)
        self.assertIn(b"password=", fill.stdout)

    def signed_in_state(self):
        r = self.run_broker("status", "work", "--json")
        return r.returncode == 0 and '"state":"signed-in"' in r.stdout.decode().replace(" ", "")

    def test_a_click_runs_the_device_code_flow_in_the_notification(self):
        self.write_config(self.default_config(extra_account="flow = device-code"))
        self.posted()
        # A script that may wait: token get --wait, answered once the sign-in is done.
        waiting = subprocess.Popen([TOKENBROKER, "token", "get", "work", "--wait", "120"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=self.caller_env(), start_new_session=True)
        self.addCleanup(self._reap, waiting)
        self.dunst.ctl("action")
        # The same notification, replaced with the code and where to enter it.
        code = self.wait_until(
            lambda: [m.group(1) for b in self.notify_calls() for m in [re.search(r'string "Enter the code (\S+) at ', b)] if m],
            timeout=60, what="the device code in the notification")[0]
        first = self.notify_calls()[0]
        replaced = next(b for b in self.notify_calls() if "Enter the code" in b)
        self.assertRegex(replaced, r'string "tokenbroker"\s+uint32 [1-9]')  # replaces_id: the one posted
        self.assertEqual(len(self.notify_calls()), 2, "one notification, then its replacement")
        # The click is no dismissal: the sign-in is pending.
        self.assertTrue(self.calls.blocks("ActionInvoked"))
        self.assertEqual(self.status()["state"], "sign-in-pending")
        self.assertIn('string "Sign-in needed: work"', replaced)
        self.emu.approve(code)
        approved = time.monotonic()
        self.wait_until(self.signed_in_state, timeout=60, what="signed in")
        out, err = waiting.communicate(timeout=ANSWER_BOUND + 30)
        self.assertLess(time.monotonic() - approved, ANSWER_BOUND)
        self.assertEqual(waiting.returncode, 0, err)
        self.assertTrue(self.emu.validate_access_token(out.decode().strip()))
        self.assertRegex(err.decode(), r"^tokenbroker: sign-in needed for 'work': .*; waiting up to 120 s \(--wait\) for the sign-in\n$")
        self.wait_until(lambda: self.calls.blocks("CloseNotification"), timeout=60, what="the notification closed")
        self.wait_until(lambda: self.dunst.displayed() == 0, timeout=60, what="no notification shown")
        self.served()
        self.assertEqual(self.device_codes_requested(), self.device_codes + 1)
        self.assertEqual(self.launched(), [])
        self.assertIn('string "Sign-in needed: work"', first)
        self.assert_no_secret_in_notifications()

    def test_a_click_opens_one_browser_and_its_success_closes_the_notification(self):
        browser, log = self.fake_browser(decision="approve")
        self.write_config(self.default_config(extra_broker="browser = " + browser))
        self.posted()
        self.dunst.ctl("action")
        self.wait_until(self.signed_in_state, timeout=90, what="signed in")
        self.wait_until(lambda: self.calls.blocks("CloseNotification"), timeout=60, what="the notification closed")
        self.assertEqual(len(self.browser_events(log, "started")), 1)
        self.assertEqual(self.launched(), [], "the callers' own browser never ran")
        # A real click (an action, then dunst closing the bubble) is no dismissal.
        self.assertEqual(self.status_state(), "signed-in")
        self.served()
        self.assertEqual(len(self.notify_calls()), 1)
        self.assert_no_secret_in_notifications()

    def status_state(self):
        return json.loads(self.run_broker("status", "work", "--json").stdout)["accounts"][0]["state"]

    def test_dismissing_starts_the_cooldown_and_login_ends_it(self):
        self.posted()
        self.dunst.ctl("close")
        self.wait_until(lambda: self.status()["state"] == "cooldown", timeout=60, what="cooldown")
        account = self.status()
        self.assertGreater(account["state_until"], time.time() + 600)
        later = self.run_broker("token", "get", "work", env=self.caller_env())
        self.assertEqual(later.returncode, 3, later.stderr)
        self.assertRegex(later.stderr.decode(), r"; dismissed; quiet until \d\d:\d\d; run 'tokenbroker login work'\n$")
        self.git_fills(5)
        self.assertEqual(len(self.notify_calls()), 1, "nothing posted during the cooldown")
        self.assertEqual(self.dunst.displayed(), 0)
        r = self.login_and_approve()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.status_state(), "signed-in")
        self.served()


class NotifyOffTest(NotificationTestCase):

    def setUp(self):
        super().setUp()
        self.write_config(self.default_config(extra_broker="notify = off"))

    def test_notify_off_posts_nothing(self):
        self.git_fills()
        self.assertEqual(self.notify_calls(), [])
        self.assertEqual(self.dunst.displayed(), 0)
        self.assertEqual(self.status()["state"], "sign-in-needed")


class NoServerTest(NotificationTestCase):
    """A session bus on which nothing owns or can activate org.freedesktop.Notifications."""
    server = False

    def test_no_server_no_notification_and_the_same_answer(self):
        self.git_fills()
        # The agent's one attempt goes nowhere (the bus answers ServiceUnknown): no notification,
        # and the state says what it said before.
        self.wait_until(self.notify_calls, timeout=60, what="the agent's attempt")
        self.assertEqual(len(self.notify_calls()), 1)
        self.assertEqual(self.status()["state"], "sign-in-needed")
        later = self.run_broker("token", "get", "work", env=self.caller_env())
        self.assertEqual(later.returncode, 3, later.stderr)
        self.assertNotIn(b"notification", later.stderr)
        self.git_fills(5)
        self.assertEqual(len(self.notify_calls()), 1, "no new attempt within reauth-cooldown")


if __name__ == "__main__":
    unittest.main()
