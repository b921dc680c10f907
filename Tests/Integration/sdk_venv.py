"""One Python virtual environment per test run with the real SDKs from PyPI (azure-identity,
google-auth, requests, msal), for the tests that run them under `tokenbroker exec`.

`TOKENBROKER_SDK_VENV` names a venv directory to use and keep (scripts/check makes one per run and
shares it with Tests/Emulator/check_fidelity.sh); without it, one is made in a temporary directory
on first use and removed when the run ends. When PyPI cannot be reached the tests are skipped,
loudly: a SKIP line on stderr and the reason in unittest's summary.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PACKAGES = ["azure-identity", "google-auth", "requests", "msal"]
_python = None
_failure = None


def sdk_python():
    """The venv's python with PACKAGES installed; raises unittest.SkipTest when PyPI fails."""
    global _python, _failure
    if _python:
        return _python
    if _failure:
        raise unittest.SkipTest(_failure)
    venv = os.environ.get("TOKENBROKER_SDK_VENV")
    if not venv:
        work = tempfile.mkdtemp(prefix="tb-sdk-venv-")
        atexit.register(shutil.rmtree, work, True)
        venv = os.path.join(work, "venv")
    python = os.path.join(venv, "bin", "python")
    try:
        if not os.path.exists(python):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True, timeout=120)
        r = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + PACKAGES,
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "pip failed")
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        _failure = "cannot install %s from PyPI (%s): the SDK tests did not run" % (" ".join(PACKAGES), e)
        print("SKIP: " + _failure, file=sys.stderr, flush=True)
        raise unittest.SkipTest(_failure)
    _python = python
    return python
