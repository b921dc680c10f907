#!/usr/bin/env python3
"""Identity provider emulator (Azure AD v2.0) for tokenbroker tests: Python API and command line.

As a module:   from idp_emulator import Emulator, make_certs
As a program:  python3 idp_emulator.py --https --cert-dir DIR --ready-file FILE [options]
It writes the ready file ({"base_url", "ca_file", "control", "port", "pid"}) once listening
and serves until SIGTERM or SIGINT. See README.md.
"""

import argparse
import json
import os
import signal
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from idp import Emulator, Options, make_certs  # noqa: E402
from idp.options import REFRESH_TOKEN_MODES, REFRESH_TOKEN_REUSE  # noqa: E402

__all__ = ["Emulator", "Options", "make_certs"]


def _parse_args(argv):
    defaults = Options()
    p = argparse.ArgumentParser(description="Identity provider emulator on 127.0.0.1.")
    p.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    p.add_argument("--https", action="store_true", help="serve TLS with a CA made by openssl")
    p.add_argument("--cert-dir", help="where ca.pem/server.pem/server.key are made or reused")
    p.add_argument("--ready-file", help="write {base_url, ca_file, control, port, pid} here")
    p.add_argument("--verbose", action="store_true", help="log every request on stderr")
    p.add_argument("--user", help="username who approves sign-ins (default user1@example.test)")
    p.add_argument("--auto-approve", type=float, metavar="SECONDS",
                   help="device codes approve themselves after SECONDS")
    p.add_argument("--auto-consent", action="store_true",
                   help="/authorize redirects with a code without a consent page")
    p.add_argument("--access-token-lifetime", type=int, default=defaults.access_token_lifetime)
    p.add_argument("--refresh-token-lifetime", type=float)
    p.add_argument("--device-code-expires-in", type=int, default=defaults.device_code_expires_in)
    p.add_argument("--interval", type=int, default=defaults.device_code_interval,
                   help="device code polling interval")
    p.add_argument("--rotate", dest="refresh_token_mode", action="store_const", const="rotate",
                   help="a new refresh token on every refresh (default)")
    p.add_argument("--no-rotate", dest="refresh_token_mode", action="store_const", const="same",
                   help="refreshes return the refresh token presented")
    p.add_argument("--refresh-token-mode", choices=REFRESH_TOKEN_MODES)
    p.add_argument("--refresh-token-reuse", choices=REFRESH_TOKEN_REUSE,
                   default=defaults.refresh_token_reuse)
    p.add_argument("--verification-uri")
    p.add_argument("--tenant-id", default=defaults.tenant_id)
    return p.parse_args(argv)


def _write_ready_file(path, emu):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"base_url": emu.base_url, "ca_file": emu.ca_file, "control": emu.control_url,
                   "port": emu.port, "pid": os.getpid()}, f)
    os.replace(tmp, path)


def main(argv=None):
    args = _parse_args(argv)
    emu = Emulator(https=args.https, cert_dir=args.cert_dir, port=args.port, verbose=args.verbose,
                   user=args.user,
                   access_token_lifetime=args.access_token_lifetime,
                   refresh_token_lifetime=args.refresh_token_lifetime,
                   device_code_expires_in=args.device_code_expires_in,
                   device_code_interval=args.interval,
                   auto_approve=args.auto_approve, auto_consent=args.auto_consent,
                   refresh_token_mode=args.refresh_token_mode or "rotate",
                   refresh_token_reuse=args.refresh_token_reuse,
                   verification_uri=args.verification_uri, tenant_id=args.tenant_id)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    emu.start()
    if args.ready_file:
        _write_ready_file(args.ready_file, emu)
    print(f"idp-emulator listening on {emu.base_url}", file=sys.stderr, flush=True)
    stop.wait()
    emu.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
