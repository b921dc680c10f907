"""Token material: opaque strings, the (unsigned) ID token, client_info, scopes, PKCE."""

import base64
import hashlib
import json
import re
import secrets

OIDC_SCOPES = ("openid", "profile", "email", "offline_access")
GRAPH = "https://graph.microsoft.com"
_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ23456789"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def opaque(prefix, counter):
    """A unique token string such as `AT-7-Xq3…`: the counter keeps them ordered in logs."""
    return f"{prefix}-{counter}-{secrets.token_urlsafe(12)}"


def user_code():
    """Nine characters, like Azure's user codes (`FQK5HW3UF`)."""
    return "".join(secrets.choice(_USER_CODE_ALPHABET) for _ in range(9))


def is_guid(text):
    return bool(_GUID.fullmatch(text or ""))


def split_scopes(raw):
    """Space-separated scopes, order kept, duplicates dropped."""
    return list(dict.fromkeys((raw or "").split()))


def resource_scopes(scopes):
    return [s for s in scopes if s not in OIDC_SCOPES]


def audience(scopes):
    """The resource a token is for: that of the first resource scope (Graph when unqualified)."""
    for scope in resource_scopes(scopes):
        return scope.rsplit("/", 1)[0] if "/" in scope else GRAPH
    return GRAPH


def id_token(claims):
    """A JWT with `alg: none`: clients such as MSAL read the claims and never verify a signature."""
    header = {"typ": "JWT", "alg": "none"}
    parts = (json.dumps(p, separators=(",", ":")).encode() for p in (header, claims))
    return ".".join(b64url(p) for p in parts) + "."


def client_info(oid, tid):
    return b64url(json.dumps({"uid": oid, "utid": tid}, separators=(",", ":")).encode())


def pairwise_sub(oid, client_id):
    """Azure's `sub` is per user and application."""
    return b64url(hashlib.sha256(f"{oid}:{client_id}".encode()).digest())


def pkce_matches(verifier, challenge, method):
    """RFC 7636: `S256` compares base64url(SHA-256(verifier)); `plain` compares as is."""
    if not verifier:
        return False
    if method == "S256":
        return b64url(hashlib.sha256(verifier.encode()).digest()) == challenge
    return verifier == challenge
