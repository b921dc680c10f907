#!/usr/bin/python3
"""A fake browser for the loopback sign-in tests (bug-cases.md "Fake browser"; B07, B24-B26).

tokenbroker starts it as `fake_browser.py SPEC URL` (config `browser = fake_browser.py SPEC`).
SPEC is a JSON file of what to do; every step is appended to spec["log"] as one JSON line, so the
test can read what the listener answered. Steps, in order:

  started       log {"event": "started", "pid", "pgid", "argv_count"}
  wait_for      wait until this file exists (B07: hold the first login open)
  action        "follow" (default): fetch the authorize URL (TLS with spec["ca_file"]), answer
                the emulator's consent page with spec["decision"] ("approve" | "decline") unless
                it redirects at once (auto_consent), then GET the redirect Location on the
                loopback listener; "none": do nothing (the timeout path)
  tamper        replace code_challenge in the authorize URL (a PKCE mismatch)
  probes        before the real redirect, GET these on the listener: [{"path", "query", "host"}]
  replay        after the real redirect, GET the same Location again
  junk          print junk on stdout and stderr (B24)
  hang          fork a child that keeps the inherited stdout/stderr open and sleeps, and
                never exit (B25)
  exit_code     exit with this status (B25: a launcher that fails)
"""
import http.client
import json
import os
import ssl
import sys
import time
import urllib.parse


def log(spec, **entry):
    entry["t"] = time.time()
    with open(spec["log"], "a") as f:
        f.write(json.dumps(entry) + "\n")


def request(url, ca_file=None, method="GET", body=None):
    """One request without following redirects: (status, headers dict, body text) or
    ("refused", {}, "") when nothing listens."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname
    if parts.scheme == "https":
        context = ssl.create_default_context(cafile=ca_file)
        conn = http.client.HTTPSConnection(host, parts.port, context=context, timeout=20)
    else:
        conn = http.client.HTTPConnection(host, parts.port, timeout=20)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    headers = {"User-Agent": "fake-browser/1"}
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        conn.request(method, target, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode("utf-8", "replace")
    except ConnectionRefusedError:
        return "refused", {}, ""
    finally:
        conn.close()


def tamper(url):
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query)
    query = [(k, "A" * 43 if k == "code_challenge" else v) for k, v in query]
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def loopback(redirect_uri, path="/", query="", host=None):
    """A URL on the listener; `host` replaces the redirect URI's host (e.g. "[::1]")."""
    base = urllib.parse.urlsplit(redirect_uri)
    netloc = base.netloc if host is None else "%s:%d" % (host, base.port)
    return urllib.parse.urlunsplit((base.scheme, netloc, path, query, ""))


def follow(spec, url):
    ca = spec.get("ca_file")
    status, headers, body = request(url, ca)
    if status == 200 and "<form" in body:  # the consent page: post the request back with a decision
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        params["decision"] = spec.get("decision", "approve")
        status, headers, body = request(url, ca, "POST", urllib.parse.urlencode(params))
    log(spec, event="authorize", status=status)
    location = headers.get("location")
    if not location:
        log(spec, event="no-redirect", body=body[:300])
        return
    redirect_uri = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))["redirect_uri"]
    for probe in spec.get("probes", []):
        s, _, page = request(loopback(redirect_uri, probe.get("path", "/"), probe.get("query", ""), probe.get("host")))
        log(spec, event="probe", probe=probe, status=s, page=page[:400])
    s, _, page = request(location)
    log(spec, event="redirect", location=location, status=s, page=page[:400])
    if spec.get("replay"):
        time.sleep(0.3)
        s, _, page = request(location)
        log(spec, event="replay", status=s, page=page[:400])


def main():
    spec_path, url = sys.argv[1], sys.argv[-1]
    with open(spec_path) as f:
        spec = json.load(f)
    log(spec, event="started", pid=os.getpid(), pgid=os.getpgid(0), sid=os.getsid(0), argv_count=len(sys.argv),
        url=url, stdin_tty=os.isatty(0))
    if spec.get("junk"):
        print("Opening in existing browser session.\nusername=junk\npassword=junk", flush=True)
        print("[1234:5678:ERROR:gpu_init.cc(523)] junk on stderr", file=sys.stderr, flush=True)
    deadline = time.time() + 60
    while spec.get("wait_for") and not os.path.exists(spec["wait_for"]) and time.time() < deadline:
        time.sleep(0.05)
    if spec.get("action", "follow") == "follow":
        follow(spec, tamper(url) if spec.get("tamper") else url)
    log(spec, event="done")
    if spec.get("hang"):
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        time.sleep(600)
    sys.exit(spec.get("exit_code", 0))


if __name__ == "__main__":
    main()
