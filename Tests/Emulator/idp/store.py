"""The identity provider's state: users and every code and token it handed out.

Provider-neutral: refusals are raised as `GrantError(reason)` and each provider module
turns the reason into its own wire error. Every public method takes the one lock, so the
threaded HTTP server and the Python control methods can call in at any time.
"""

import threading
import time
import uuid
from dataclasses import asdict, dataclass, field

from . import tokens

DEFAULT_USERNAME = "user1@example.test"
AUTH_CODE_LIFETIME = 600  # Azure: "about 10 minutes"


class GrantError(Exception):
    """A request the token endpoint refuses. `reason` is a key of the providers' error tables."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


@dataclass
class User:
    username: str
    oid: str
    tid: str
    name: str
    mfa_required: bool = False      # refresh grants answer interaction_required (AADSTS50076)
    consent_required: bool = False  # refresh grants answer invalid_grant/consent_required (AADSTS65001)
    # Resources (e.g. "https://vault.azure.net") whose refreshes answer interaction_required with
    # a claims challenge, unless the grant comes from a sign-in that asked for that resource.
    step_up_resources: list = field(default_factory=list)


@dataclass
class DeviceCode:
    device_code: str
    user_code: str
    client_id: str
    scopes: list
    tenant: str
    created: float          # store.now()
    expires_in: int
    interval: int
    status: str = "pending"  # pending | approved | declined | redeemed
    username: str | None = None
    script: list = field(default_factory=list)  # answers still to give, before state applies
    polls: list = field(default_factory=list)   # {"t": seconds since start, "answer": error or "success"}


@dataclass
class AuthCode:
    code: str
    client_id: str
    redirect_uri: str
    scopes: list
    tenant: str
    username: str
    challenge: str | None
    challenge_method: str
    nonce: str | None
    created: float
    grants_refresh_token: bool = False  # decided by the provider at authorization time
    redeemed: bool = False


@dataclass
class RefreshToken:
    token: str
    username: str
    client_id: str | None  # None: any client may redeem it (seeded by a test)
    scopes: list
    family: str            # every token rotated from one sign-in shares its family
    created: float
    expires: float | None
    state: str = "active"  # active | redeemed | revoked
    stepped_up: list = field(default_factory=list)  # step-up resources its sign-in satisfied


@dataclass
class AccessToken:
    token: str
    username: str
    client_id: str
    scopes: list
    tid: str
    aud: str
    iat: int  # epoch seconds
    exp: int
    family: str | None = None  # the refresh-token family (grant) it was issued with
    revoked: bool = False


class GrantStore:
    """Users, device codes, authorization codes, refresh and access tokens."""

    def __init__(self, options, default_username=DEFAULT_USERNAME, clock=time.monotonic):
        self.options = options
        self.default_username = default_username
        self._clock = clock
        self._started = clock()
        self.lock = threading.RLock()
        self.reset()

    def now(self):
        """Monotonic seconds since the store was made: every time it records is on this clock."""
        return self._clock() - self._started

    def reset(self):
        """Forget every user, code and token; the default user approves again."""
        with self.lock:
            self.users = {}
            self.current_username = None
            self.device_codes = {}  # by device_code, in creation order
            self.next_device_script = None
            self.auth_codes = {}
            self.consents = set()  # (username, client_id) pairs that consented once
            self.refresh_tokens = {}
            self.access_tokens = {}
            self.counter = 0
            self.set_user(self.default_username)

    def _next(self, prefix):
        self.counter += 1
        return tokens.opaque(prefix, self.counter)

    # -- users ---------------------------------------------------------------------------

    def set_user(self, username, oid=None, tid=None, name=None):
        """Create or update a user and make it the one who approves sign-ins."""
        with self.lock:
            user = self._ensure_user(username)
            user.oid = oid or user.oid
            user.tid = tid or user.tid
            user.name = name or user.name
            self.current_username = username
            return user

    def set_user_flags(self, username=None, mfa_required=None, consent_required=None,
                       step_up_resources=None):
        """Switch MFA / consent requirements of a user (default: the approving user)."""
        with self.lock:
            user = self.user(username)
            if mfa_required is not None:
                user.mfa_required = bool(mfa_required)
            if consent_required is not None:
                user.consent_required = bool(consent_required)
            if step_up_resources is not None:
                user.step_up_resources = [r.rstrip("/") for r in step_up_resources]
            return user

    def user(self, username=None):
        """A user by name (default: the approving user); LookupError if unknown."""
        with self.lock:
            name = username or self.current_username
            if name not in self.users:
                raise LookupError(f"unknown user {name!r}")
            return self.users[name]

    def _ensure_user(self, username):
        if username not in self.users:
            oid = str(uuid.uuid5(uuid.NAMESPACE_URL, "user:" + username))
            self.users[username] = User(username, oid, self.options.tenant_id,
                                        username.split("@")[0].title())
        return self.users[username]

    # -- device codes --------------------------------------------------------------------

    def create_device_code(self, client_id, scopes, tenant, user_code=None):
        with self.lock:
            dc = DeviceCode(self._next("DC"), user_code or tokens.user_code(), client_id, scopes,
                            tenant,
                            self.now(), self.options.device_code_expires_in,
                            self.options.device_code_interval)
            if self.next_device_script is not None:
                dc.script, self.next_device_script = self.next_device_script, None
            self.device_codes[dc.device_code] = dc
            return dc

    def device_code(self, user_code=None, pending_only=False):
        """A device code by user code (case and dashes ignored), or the latest one."""
        with self.lock:
            codes = [dc for dc in self.device_codes.values()
                     if not pending_only or dc.status == "pending"]
            if user_code is not None:
                def plain(code):
                    return code.replace("-", "").upper()
                codes = [dc for dc in codes if plain(dc.user_code) == plain(user_code)]
            if not codes:
                raise LookupError(f"no {'pending ' if pending_only else ''}device code"
                                  + (f" with user code {user_code!r}" if user_code else ""))
            return codes[-1]

    def approve(self, user_code=None, username=None):
        """Approve a pending device code (default: the latest) as `username` (default: approving user)."""
        with self.lock:
            dc = self.device_code(user_code, pending_only=True)
            dc.status, dc.username = "approved", self.user(username).username
            return dc

    def decline(self, user_code=None):
        with self.lock:
            dc = self.device_code(user_code, pending_only=True)
            dc.status = "declined"
            return dc

    def script_device_polls(self, answers, user_code=None):
        """Queue poll answers for a device code, or (no user_code) for the next one created.

        An answer is "success", an error name ("slow_down"), or a dict with "error" and any
        extra body fields ("interval": 15) and optionally "status" (HTTP status, default 400).
        """
        with self.lock:
            if user_code is None:
                self.next_device_script = list(answers)
            else:
                self.device_code(user_code).script = list(answers)

    def poll_device_code(self, device_code, client_id):
        """Record a poll and decide its answer. Returns `(DeviceCode, answer)`."""
        with self.lock:
            dc = self.device_codes.get(device_code)
            if dc is None or dc.client_id != client_id:
                raise GrantError("bad_verification_code")
            now = self.now()
            if dc.script:
                answer = dc.script.pop(0)
            elif dc.status == "redeemed":
                answer = "invalid_grant"
            elif now >= dc.created + dc.expires_in:
                answer = "expired_token"
            elif dc.status == "declined":
                answer = "authorization_declined"
            elif dc.status == "approved" or (self.options.auto_approve is not None
                                             and now - dc.created >= self.options.auto_approve):
                answer = "success"
            else:
                answer = "authorization_pending"
            if answer == "success":
                dc.status = "redeemed"
                dc.username = dc.username or self.current_username
            dc.polls.append({"t": now,
                             "answer": answer["error"] if isinstance(answer, dict) else answer})
            return dc, answer

    # -- authorization codes -------------------------------------------------------------

    def create_auth_code(self, client_id, redirect_uri, scopes, tenant, challenge=None,
                         challenge_method="plain", nonce=None, grants_refresh_token=False):
        """A code for the approving user."""
        with self.lock:
            ac = AuthCode(self._next("AC"), client_id, redirect_uri, scopes, tenant,
                          self.user().username, challenge, challenge_method, nonce,
                          self.now(), grants_refresh_token)
            self.auth_codes[ac.code] = ac
            return ac

    def redeem_auth_code(self, code, client_id, redirect_uri, verifier):
        """Check and consume a code (client, redirect URI, PKCE). Returns the AuthCode."""
        with self.lock:
            ac = self.auth_codes.get(code)
            if ac is None:
                raise GrantError("bad_code")
            if ac.redeemed:
                raise GrantError("code_redeemed")
            if self.now() >= ac.created + AUTH_CODE_LIFETIME:
                raise GrantError("code_expired")
            if ac.client_id != client_id:
                raise GrantError("client_mismatch")
            if ac.redirect_uri != redirect_uri:
                raise GrantError("redirect_mismatch")
            if ac.challenge and not tokens.pkce_matches(verifier, ac.challenge, ac.challenge_method):
                raise GrantError("pkce_mismatch")
            ac.redeemed = True
            return ac

    def first_consent(self, client_id):
        """Record that the approving user consented to `client_id`; True if it is the first time."""
        with self.lock:
            key = (self.current_username, client_id)
            first = key not in self.consents
            self.consents.add(key)
            return first

    # -- refresh tokens ------------------------------------------------------------------

    def seconds_left(self, rt):
        """Whole seconds `rt` has left (at least 0), or None when it never expires."""
        with self.lock:
            return None if rt.expires is None else max(0, int(rt.expires - self.now()))

    def add_refresh_token(self, username=None, client_id=None, scopes=(), token=None, family=None,
                          stepped_up=None):
        """Register a refresh token (issued here, or seeded by a test such as `RT1`). A new sign-in
        (no `family`) satisfies the user's step-up resources its scopes ask for."""
        with self.lock:
            user = self._ensure_user(username) if username else self.user()
            now = self.now()
            lifetime = self.options.refresh_token_lifetime
            if stepped_up is None:
                stepped_up = [r for r in user.step_up_resources if _covers(scopes, r)]
            rt = RefreshToken(token or self._next("RT"), user.username, client_id, list(scopes),
                              family or self._next("FAM"), now,
                              None if lifetime is None else now + lifetime,
                              stepped_up=list(stepped_up))
            self.refresh_tokens[rt.token] = rt
            return rt

    def redeem_refresh_token(self, token, client_id, rotate, scopes=()):
        """Check a refresh token and, if `rotate`, replace it with a new one of its family.

        Returns `(presented, new_or_None, user)`. Raises GrantError for unknown, revoked,
        expired, wrong-client or (per `refresh_token_reuse`) reused tokens, and for users
        switched to MFA- or consent-required.
        """
        with self.lock:
            rt = self.refresh_tokens.get(token)
            if rt is None:
                raise GrantError("unknown")
            if rt.state == "revoked":
                raise GrantError("revoked")
            if rt.expires is not None and self.now() >= rt.expires:
                raise GrantError("expired")
            if rt.client_id is not None and rt.client_id != client_id:
                raise GrantError("client_mismatch")
            if rt.state == "redeemed" and self.options.refresh_token_reuse != "accept":
                if self.options.refresh_token_reuse == "revoke-family":
                    self._revoke_family(rt.family)
                raise GrantError("reused")
            user = self.users[rt.username]
            if user.mfa_required:
                raise GrantError("mfa_required")
            if user.consent_required:
                raise GrantError("consent_required")
            if any(_covers(scopes, r) and r not in rt.stepped_up for r in user.step_up_resources):
                raise GrantError("mfa_required")
            new = None
            if rotate:
                rt.state = "redeemed"
                new = self.add_refresh_token(user.username, client_id, rt.scopes, family=rt.family,
                                             stepped_up=rt.stepped_up)
            return rt, new, user

    def _revoke_family(self, family):
        for rt in self.refresh_tokens.values():
            if rt.family == family:
                rt.state = "revoked"

    def revoke(self, token):
        """Revoke a refresh token's whole grant (its family), or one access token.

        Returns the number of tokens revoked (0 for an unknown token).
        """
        with self.lock:
            if token in self.refresh_tokens:
                family = self.refresh_tokens[token].family
                live = [rt for rt in self.refresh_tokens.values()
                        if rt.family == family and rt.state != "revoked"]
                self._revoke_family(family)
                return len(live)
            at = self.access_tokens.get(token)
            if at and not at.revoked:
                at.revoked = True
                return 1
            return 0

    def revoke_grant(self, token):
        """RFC 7009 as Google does it: a refresh or access token revokes its whole grant,
        every refresh and access token of its family. Returns the number revoked."""
        with self.lock:
            record = self.refresh_tokens.get(token) or self.access_tokens.get(token)
            if record is None or record.family is None:
                return self.revoke(token)
            rts = [rt for rt in self.refresh_tokens.values()
                   if rt.family == record.family and rt.state != "revoked"]
            ats = [at for at in self.access_tokens.values()
                   if at.family == record.family and not at.revoked]
            for rt in rts:
                rt.state = "revoked"
            for at in ats:
                at.revoked = True
            return len(rts) + len(ats)

    def revoke_user(self, username):
        """Revoke every refresh token of a user ("revoke sessions"); access tokens live on, as in Azure."""
        with self.lock:
            live = [rt for rt in self.refresh_tokens.values()
                    if rt.username == username and rt.state != "revoked"]
            for rt in live:
                rt.state = "revoked"
            return len(live)

    # -- access tokens -------------------------------------------------------------------

    def issue_access_token(self, user, client_id, scopes, tid, family=None, jwt=False):
        """`jwt`: the token is a JWT carrying its claims (`aud`, `tid`, `oid`, `scp`, `exp`), as
        Entra's are, for clients that read them (the Azure CLI reads `tid`); else opaque."""
        with self.lock:
            now = self.options.wall_time()
            kept = [s for s in scopes if s != "offline_access"]
            exp = now + int(self.options.access_token_lifetime)
            token = self._next("AT")
            if jwt:
                token = tokens.id_token({"jti": token, "aud": tokens.audience(scopes), "tid": tid, "oid": user.oid,
                                         "upn": user.username, "appid": client_id,
                                         "scp": " ".join(x.rsplit("/", 1)[-1] for x in kept), "iat": now, "exp": exp})
            at = AccessToken(token, user.username, client_id, kept, tid, tokens.audience(scopes), now, exp, family)
            self.access_tokens[at.token] = at
            return at

    def validate_access_token(self, token):
        """What a resource server needs to know of a token, or None if unknown, revoked or expired."""
        with self.lock:
            at = self.access_tokens.get(token)
            if at is None or at.revoked or self.options.wall_time() >= at.exp:
                return None
            user = self.users[at.username]
            return {"active": True, "username": at.username, "oid": user.oid, "tid": at.tid,
                    "client_id": at.client_id, "scope": " ".join(at.scopes), "aud": at.aud,
                    "iat": at.iat, "exp": at.exp}

    # -- inspection ----------------------------------------------------------------------

    def snapshot(self):
        """Everything, as JSON-ready dicts (for `/_control/state`)."""
        with self.lock:
            return {
                "approving_user": self.current_username,
                "users": [asdict(u) for u in self.users.values()],
                "device_codes": [asdict(d) for d in self.device_codes.values()],
                "refresh_tokens": [asdict(r) for r in self.refresh_tokens.values()],
                "access_tokens": [asdict(a) for a in self.access_tokens.values()],
                "auth_codes": [asdict(c) for c in self.auth_codes.values()],
            }


def _covers(scopes, resource):
    """True when one of `scopes` is for `resource` (`RESOURCE/.default`, `RESOURCE/Name`)."""
    return any(s == resource or s.startswith(resource + "/") for s in scopes)
