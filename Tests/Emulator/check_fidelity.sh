#!/bin/sh
# Fidelity check of the identity provider emulator against MSAL Python and google-auth.
# Makes a venv in a temp dir (or reuses $IDP_FIDELITY_VENV), installs them from PyPI,
# starts the emulator over HTTPS and runs check_fidelity.py. Exit 0 only if every step passed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/idp-fidelity.XXXXXX")
emulator_pid=
cleanup() {
    if [ -n "$emulator_pid" ]; then kill "$emulator_pid" 2>/dev/null || true; wait "$emulator_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

venv=${IDP_FIDELITY_VENV:-$work/venv}
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check msal google-auth requests; then
    # make check runs this with IDP_FIDELITY_OPTIONAL=1: no PyPI must not fail the whole suite.
    if [ "${IDP_FIDELITY_OPTIONAL:-0}" = 1 ]; then
        echo "SKIP: cannot install msal and google-auth from PyPI; emulator fidelity not checked" >&2
        exit 0
    fi
    echo "FAIL: cannot install msal and google-auth from PyPI" >&2
    exit 1
fi

"$python" "$here/idp_emulator.py" --https --cert-dir "$work/certs" --ready-file "$work/ready.json" &
emulator_pid=$!
i=0
while [ ! -s "$work/ready.json" ]; do
    i=$((i + 1))
    if [ "$i" -gt 100 ] || ! kill -0 "$emulator_pid" 2>/dev/null; then
        echo "FAIL: the emulator did not start" >&2
        exit 1
    fi
    sleep 0.1
done

REQUESTS_CA_BUNDLE="$work/certs/ca.pem" "$venv/bin/python" "$here/check_fidelity.py" "$work/ready.json"
