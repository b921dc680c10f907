"""Behaviour switches of the emulator, settable at start and at any time later."""

import time
from dataclasses import asdict, dataclass, fields

DEFAULT_TENANT_ID = "9f4e7a1c-2b3d-4e5f-8a9b-0c1d2e3f4a5b"

REFRESH_TOKEN_MODES = ("rotate", "same", "omit", "empty")
REFRESH_TOKEN_REUSE = ("accept", "reject", "revoke-family")


@dataclass
class Options:
    """Every option, its default, and what it does.

    - access_token_lifetime: `expires_in` (and `ext_expires_in`) of access tokens, seconds.
    - refresh_token_lifetime: seconds a refresh token stays valid; None = never expires.
    - device_code_expires_in / device_code_interval: what /devicecode answers (Azure: 900 / 5).
    - auto_approve: seconds after which a pending device code approves itself; None = never.
    - auto_consent: /authorize redirects with a code at once instead of showing a consent page.
    - refresh_token_mode: what a refresh_token grant returns as `refresh_token`:
      "rotate" a new one (Azure), "same" the one presented, "omit" no field (Google),
      "empty" `"refresh_token": ""`. Only "rotate" marks the presented token as redeemed.
    - refresh_token_reuse: a redeemed (rotated-away) refresh token presented again is
      "accept"ed (Azure does not revoke old ones), "reject"ed with invalid_grant (strict
      rotation, like Dex), or rejected and its whole family revoked ("revoke-family").
    - verification_uri: what /devicecode advertises; None = the emulator's own /devicelogin.
    - tenant_id: the tenant GUID that domain tenants (`contoso.com`) resolve to; new users' tid.
    - google_iss_without_scheme: Google's ID tokens say `iss` without `https://`, as Google's
      sometimes do (`accounts.google.com`; here `127.0.0.1:PORT/google`).
    - confidential_clients: {client_id: secret} of clients that must authenticate at the token
      endpoint (HTTP Basic or `client_secret`); every other client is public and may send no
      secret. Changing a secret here is an admin rotating it.
    - google_projects: {project_id: number} that Cloud Resource Manager's `projects.get`
      (/google/resourcemanager/v1/projects/ID) knows; any other id is answered 403, as Google
      answers a project the caller cannot see. None: every id, with a number derived from it.
    - announce_refresh_token_lifetime: replies carry the refresh token's remaining lifetime
      (`refresh_token_lifetime`) as the provider states it: Google `refresh_token_expires_in`
      (a "Testing" consent screen's 7 days: 604799), the OpenID Provider Keycloak's
      `refresh_expires_in` (0 when the token has no expiry). Azure states none. Enforced either
      way: a refresh after the time is `invalid_grant` ("Token has been expired or revoked." /
      "Token is not active").
    - azure_jwt_access_tokens: Azure access tokens are JWTs with Entra's claims (`aud`, `tid`,
      `oid`, `scp`, `exp`; unsigned), for clients that read them (the Azure CLI reads `tid`);
      default opaque strings.
    - clock_offset: seconds the provider's clock runs ahead of this machine's (negative: behind).
      Every Unix time it writes or judges is on its clock: ID tokens' and JWT access tokens'
      `iat`, `nbf` and `exp`, whether a resource still takes an access token, tokeninfo's `exp`.
      Durations (`expires_in`) are the same on any clock.
    - id_token_lifetime: `exp` − `iat` of ID tokens, seconds (Entra and Google 3600; Keycloak's
      default 300).
    """
    access_token_lifetime: int = 3600
    refresh_token_lifetime: float | None = None
    device_code_expires_in: int = 900
    device_code_interval: int = 5
    auto_approve: float | None = None
    auto_consent: bool = False
    refresh_token_mode: str = "rotate"
    refresh_token_reuse: str = "accept"
    verification_uri: str | None = None
    tenant_id: str = DEFAULT_TENANT_ID
    google_iss_without_scheme: bool = False
    confidential_clients: dict | None = None
    public_device_clients: list | None = None
    google_projects: dict | None = None
    azure_jwt_access_tokens: bool = False
    announce_refresh_token_lifetime: bool = False
    clock_offset: int = 0
    id_token_lifetime: int = 3600

    def update(self, **changes):
        """Set options by name; unknown names and values out of range raise ValueError."""
        names = {f.name for f in fields(self)}
        unknown = set(changes) - names
        if unknown:
            raise ValueError(f"unknown option(s): {', '.join(sorted(unknown))}")
        if changes.get("refresh_token_mode", self.refresh_token_mode) not in REFRESH_TOKEN_MODES:
            raise ValueError(f"refresh_token_mode must be one of {REFRESH_TOKEN_MODES}")
        if changes.get("refresh_token_reuse", self.refresh_token_reuse) not in REFRESH_TOKEN_REUSE:
            raise ValueError(f"refresh_token_reuse must be one of {REFRESH_TOKEN_REUSE}")
        for name, value in changes.items():
            setattr(self, name, value)
        return self

    def wall_time(self):
        """Unix seconds now on the provider's clock (`clock_offset`)."""
        return int(time.time()) + int(self.clock_offset)

    def as_dict(self):
        return asdict(self)
