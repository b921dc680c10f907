"""An independent reader of `tokens.enc` (interface.md §7.1) through libsodium itself (ctypes on
Debian's libsodium.so.23), so tests check the file with the library's own Argon2id and
XChaCha20-Poly1305 rather than with tokenbroker's code."""
import ctypes
import ctypes.util
import json
import struct

HEADER = 65
_lib = None


def lib():
    global _lib
    if _lib is None:
        name = ctypes.util.find_library("sodium")
        if not name:
            raise unittest_skip("libsodium is not installed")
        _lib = ctypes.CDLL(name)
        if _lib.sodium_init() < 0:
            raise RuntimeError("sodium_init failed")
    return _lib


def unittest_skip(reason):
    import unittest
    return unittest.SkipTest(reason)


def header(data):
    """(version, kdf id, opslimit, memlimit, salt, aead id, nonce) of the file's first 65 bytes."""
    if len(data) < HEADER or data[:8] != b"TBKSTOR\0":
        raise ValueError("not a tokenbroker encrypted store")
    version, kdf = data[8], data[9]
    ops, = struct.unpack("<I", data[12:16])
    mem, = struct.unpack("<Q", data[16:24])
    return version, kdf, ops, mem, data[24:40], data[40], data[41:65]


def derive(passphrase, data):
    """The key libsodium derives from `passphrase` with the salt and limits of `data`'s header."""
    _, kdf, ops, mem, salt, _, _ = header(data)
    out = ctypes.create_string_buffer(32)
    rc = lib().crypto_pwhash(out, ctypes.c_ulonglong(32), passphrase, ctypes.c_ulonglong(len(passphrase)), salt,
                             ctypes.c_ulonglong(ops), ctypes.c_size_t(mem), ctypes.c_int(kdf))
    if rc != 0:
        raise RuntimeError("crypto_pwhash failed")
    return out.raw


def decrypt(passphrase, data, key=None):
    """The plaintext document of `data`, or None when it does not authenticate."""
    key = key or derive(passphrase, data)
    nonce, ciphertext = data[41:65], data[HEADER:]
    if len(ciphertext) < 16:
        return None
    out = ctypes.create_string_buffer(len(ciphertext) - 16 or 1)
    length = ctypes.c_ulonglong(0)
    rc = lib().crypto_aead_xchacha20poly1305_ietf_decrypt(
        out, ctypes.byref(length), None, ciphertext, ctypes.c_ulonglong(len(ciphertext)), data[:HEADER],
        ctypes.c_ulonglong(HEADER), nonce, key)
    return out.raw[:length.value] if rc == 0 else None


def items(passphrase, path):
    """The `items` of the store at `path` (KEY -> parsed document); raises if it does not open."""
    with open(path, "rb") as f:
        data = f.read()
    plain = decrypt(passphrase, data)
    if plain is None:
        raise AssertionError("%s does not authenticate" % path)
    doc = json.loads(plain)
    assert doc["v"] == 1
    return {k: json.loads(v) for k, v in doc["items"].items()}


def seal(passphrase, document, ops, mem, salt=None):
    """A `tokens.enc` holding `document` (bytes), sealed with libsodium under a key derived with
    `ops` passes over `mem` bytes: stores of any limits, made without tokenbroker's code."""
    salt = salt or _random(16)
    nonce = _random(24)
    head = b"TBKSTOR\0" + bytes([1, 2, 0, 0]) + struct.pack("<I", ops) + struct.pack("<Q", mem) + salt + b"\x01" + nonce
    key = derive(passphrase, head + b"\0" * 16)
    out = ctypes.create_string_buffer(len(document) + 16)
    length = ctypes.c_ulonglong(0)
    rc = lib().crypto_aead_xchacha20poly1305_ietf_encrypt(
        out, ctypes.byref(length), document, ctypes.c_ulonglong(len(document)), head, ctypes.c_ulonglong(HEADER),
        None, nonce, key)
    if rc != 0:
        raise RuntimeError("crypto_aead_xchacha20poly1305_ietf_encrypt failed")
    return head + out.raw[:length.value]


def reseal(passphrase, path, ops, mem):
    """Rewrites the store at `path` with the same documents under new limits (and a new salt)."""
    with open(path, "rb") as f:
        plain = decrypt(passphrase, f.read())
    if plain is None:
        raise AssertionError("%s does not authenticate" % path)
    with open(path, "wb") as f:
        f.write(seal(passphrase, plain, ops, mem))


def _random(count):
    buf = ctypes.create_string_buffer(count)
    lib().randombytes_buf(buf, ctypes.c_size_t(count))
    return buf.raw
