"""One Python virtual environment per test run with the real SDKs from PyPI (azure-identity,
google-auth, requests, msal), for the tests that run them under `tokenbroker exec`; and others
like it by name (`venv_python`: django-oauth-toolkit for test_oidc_django_oauth_toolkit.py).

`TOKENBROKER_SDK_VENV` names a venv directory to use and keep (scripts/check makes one per run and
shares it with Tests/Emulator/check_fidelity.sh); without it, one is made in a temporary directory
on first use and removed when the run ends. When PyPI cannot be reached the tests are skipped,
loudly: a SKIP line on stderr and the reason in unittest's summary. The Azure CLI gets a venv of its
own (`az_cli`, `TOKENBROKER_AZ_VENV`): it is large and pins its own azure-identity and msal.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PACKAGES = ["azure-identity", "google-auth", "requests", "msal"]
_pythons = {}
_failures = {}


def sdk_python():
    """The venv's python with PACKAGES installed; raises unittest.SkipTest when PyPI fails."""
    return venv_python("sdk", PACKAGES)


def venv_python(name, packages, venv=None, timeout=600):
    """The python of venv `name` with `packages` installed (pip requirement strings): in `venv` when
    given, else the "sdk" one is TOKENBROKER_SDK_VENV, another is made beside it as `venv-NAME`,
    or in a temporary directory without it. `timeout`: pip's, in seconds. Raises
    unittest.SkipTest, once loudly, when PyPI fails."""
    if name in _pythons:
        return _pythons[name]
    if name in _failures:
        raise unittest.SkipTest(_failures[name])
    if not venv:
        venv = os.environ.get("TOKENBROKER_SDK_VENV")
        if venv and name != "sdk":
            venv = venv.rstrip("/") + "-" + name
    if not venv:
        work = tempfile.mkdtemp(prefix="tb-%s-venv-" % name)
        atexit.register(shutil.rmtree, work, True)
        venv = os.path.join(work, "venv")
    python = os.path.join(venv, "bin", "python")
    try:
        if not os.path.exists(python):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True, timeout=120)
        r = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + packages,
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "pip failed")
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        _failures[name] = "cannot install %s from PyPI (%s): the tests that need it did not run" % (
            " ".join(packages), e)
        print("SKIP: " + _failures[name], file=sys.stderr, flush=True)
        raise unittest.SkipTest(_failures[name])
    _pythons[name] = python
    return python


def az_cli():
    """The `az` of a throw-away venv with azure-cli from PyPI (large: about 730 MB and two minutes
    to install); `TOKENBROKER_AZ_VENV` names a venv to use and keep instead. Raises
    unittest.SkipTest, loudly, when PyPI cannot be reached."""
    python = venv_python("az", ["azure-cli"], venv=os.environ.get("TOKENBROKER_AZ_VENV"), timeout=1200)
    return os.path.join(os.path.dirname(python), "az")
