"""A Secret Service session whose key the service derived otherwise, for the secrets that one
tokenbroker-core process sends or reads first (README "Keyrings": kwalletd 5 does so for about one
session in 170). An LD_PRELOAD library, built here with cc, over libgcrypt's AES as libsecret uses
it (AES-128-CBC, PKCS#7 padding, one handle per secret):

- `SESSION_KEY_SHIM_SENDS=N`: the first N secrets sent (CreateItem, SetSecret) are ones the
  service cannot decrypt (their padding reads invalid, as under a wrong key; kwalletd then
  answers "Can't find session", after it has made the item).
- `SESSION_KEY_SHIM_READS=N`: the first N secrets read cannot be decrypted (their padding reads
  invalid): libsecret's "Received invalid secret from the secret storage".

Loaded into tokenbroker-core only (the front is a static executable and ignores LD_PRELOAD)."""
import os
import subprocess

SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

/* libsecret encrypts and decrypts each secret with its own handle, block by block, in place or
   not, and closes the handle before it sends the secret or checks the padding. */
typedef unsigned int gcry_error_t;
typedef void *gcry_cipher_hd_t;
typedef gcry_error_t (*block_fn)(gcry_cipher_hd_t, void *, size_t, const void *, size_t);
typedef gcry_error_t (*setiv_fn)(gcry_cipher_hd_t, const void *, size_t);
typedef void (*close_fn)(gcry_cipher_hd_t);

static gcry_cipher_hd_t handle;
static unsigned char *iv, *before_last, *last;
static int direction; /* 1: encrypting, 2: decrypting */

static void follow(gcry_cipher_hd_t h) {
  if (h == handle) return;
  handle = h;
  iv = before_last = last = NULL;
  direction = 0;
}

static void blocks(gcry_cipher_hd_t h, void *out, size_t size, int how) {
  follow(h);
  direction = how;
  for (size_t at = 0; at + 16 <= size; at += 16) {
    before_last = last;
    last = (unsigned char *)out + at;
  }
}

static int left(const char *name, int *count) {
  if (*count < 0) {
    const char *value = getenv(name);
    *count = value ? atoi(value) : 0;
  }
  if (*count == 0) return 0;
  --*count;
  return 1;
}

gcry_error_t gcry_cipher_setiv(gcry_cipher_hd_t h, const void *value, size_t size) {
  static setiv_fn real;
  if (!real) real = (setiv_fn)dlsym(RTLD_NEXT, "gcry_cipher_setiv");
  follow(h);
  iv = (unsigned char *)value;
  return real(h, value, size);
}

gcry_error_t gcry_cipher_encrypt(gcry_cipher_hd_t h, void *out, size_t size, const void *in, size_t in_size) {
  static block_fn real;
  if (!real) real = (block_fn)dlsym(RTLD_NEXT, "gcry_cipher_encrypt");
  gcry_error_t r = real(h, out, size, in, in_size);
  blocks(h, out, size, 1);
  return r;
}

gcry_error_t gcry_cipher_decrypt(gcry_cipher_hd_t h, void *out, size_t size, const void *in, size_t in_size) {
  static block_fn real;
  if (!real) real = (block_fn)dlsym(RTLD_NEXT, "gcry_cipher_decrypt");
  gcry_error_t r = real(h, out, size, in, in_size);
  blocks(h, out, size, 2);
  return r;
}

/* A sent secret: the last byte of the block before the last (or of the IV) is changed, so the
   receiver's last block ends in a byte over 16, never valid PKCS#7 padding. A secret read: the
   last byte of its last block is. */
void gcry_cipher_close(gcry_cipher_hd_t h) {
  static close_fn real;
  static int sends = -1, reads = -1;
  if (!real) real = (close_fn)dlsym(RTLD_NEXT, "gcry_cipher_close");
  if (h == handle) {
    unsigned char *before = before_last ? before_last : iv;
    if (direction == 1 && last && before && left("SESSION_KEY_SHIM_SENDS", &sends)) before[15] ^= 0x80;
    if (direction == 2 && last && left("SESSION_KEY_SHIM_READS", &reads)) last[15] = 0x80;
    follow(NULL);
  }
  real(h);
}
"""


def env(directory, sends=0, reads=0):
    """The environment that loads the shim (built into `directory` once), spoiling the first
    `sends` secrets sent and the first `reads` secrets read of each process."""
    library = os.path.join(directory, "session_key_shim.so")
    if not os.path.exists(library):
        source = os.path.join(directory, "session_key_shim.c")
        with open(source, "w") as f:
            f.write(SOURCE)
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"], check=True)
    return {"LD_PRELOAD": library, "SESSION_KEY_SHIM_SENDS": str(sends), "SESSION_KEY_SHIM_READS": str(reads)}
