"""Test-time TLS material: a throwaway CA and a server certificate it signs, made with `openssl`."""

import os
import subprocess

_SERVER_EXTENSIONS = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, DNS:*.example.test, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
"""


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_certs(directory):
    """Create (or reuse) `ca.pem`, `server.pem` and `server.key` in `directory`.

    The server certificate is valid for `localhost`, `127.0.0.1`, `::1` and the names
    `*.example.test` (which a test reaches through a proxy, where loopback names would go
    direct). Keys are
    EC P-256 (fast to make). Returns `(ca_pem_path, cert_path, key_path)`.
    """
    os.makedirs(directory, exist_ok=True)
    ca, cert, key = (os.path.join(directory, n) for n in ("ca.pem", "server.pem", "server.key"))
    if all(os.path.exists(p) for p in (ca, cert, key)):
        return ca, cert, key
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
             "-subj", "/CN=tokenbroker test CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)
    _openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr",
             "-subj", "/CN=localhost", cwd=directory)
    with open(os.path.join(directory, "server.ext"), "w") as f:
        f.write(_SERVER_EXTENSIONS)
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-set_serial", str(int.from_bytes(os.urandom(8), "big")), "-days", "30",
             "-extfile", "server.ext", "-out", "server.pem", cwd=directory)
    return ca, cert, key
