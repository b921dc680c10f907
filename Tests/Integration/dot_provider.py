"""A real django-oauth-toolkit (DOT, from PyPI, in a throw-away venv: sdk_venv.py) OpenID Provider on
loopback for the oidc tests, behind a real nginx (Debian's) that answers 429 when asked to.

DOT is configured the way its documentation says a deployment is: a Django project (settings,
urls, one OAuth2Validator subclass adding the `email` and `preferred_username` claims), SQLite,
RS256 ID tokens, strict refresh-token rotation (`ROTATE_REFRESH_TOKEN`, no grace period, and
`REFRESH_TOKEN_REUSE_PROTECTION`: a rotated-away refresh token presented again revokes the whole
family, as OAuth 2.0 Security BCP §4.14.2 describes), RFC 7009 revocation that confidential
clients must authenticate for, and the device grant (DOT >= 3.1). One application per grant type,
as DOT's model has it. The user's side is played over HTTP as a browser would: a session cookie
from a sign-in form, the device page, the authorization endpoint.

nginx proxies everything to DOT (passing `Host`, so the discovery document and the ID tokens name
nginx's port: the issuer is `http://127.0.0.1:NGINX/o`). Its token location is rate limited with
`limit_req` (1 request a minute, `limit_req_status 429`, nginx's own HTML page, `Retry-After`
added) only while the file `throttle` exists in its directory: `throttle(on=True)`.
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse

import loopback_http
from loopback_http import free_port
import sdk_venv

PACKAGES = ["django-oauth-toolkit>=3.1", "oauthlib>=3.3,<4"]  # 3.1: the device grant; oauthlib 4 breaks its device reply
NGINX = "/usr/sbin/nginx"
USER = ("alice", "alice-Passw0rd")
RETRY_AFTER = 3  # what nginx's throttled token location adds as Retry-After, seconds

SETTINGS = '''
import os
BASE = os.path.dirname(os.path.abspath(__file__))
SECRET_KEY = "dot-test-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions",
                  "oauth2_provider"]
MIDDLEWARE = ["django.contrib.sessions.middleware.SessionMiddleware",
              "django.contrib.auth.middleware.AuthenticationMiddleware"]
ROOT_URLCONF = "dotsite.urls"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(BASE, "dot.sqlite3"),
                         "OPTIONS": {"timeout": 30}}}
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True,
              "OPTIONS": {"context_processors": ["django.template.context_processors.request"]}}]
USE_TZ = True
LOGIN_URL = "/signin/"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
LOGGING = {"version": 1, "disable_existing_loggers": False, "handlers": {"console": {"class": "logging.StreamHandler"}},
           "loggers": {"django.request": {"handlers": ["console"], "level": "ERROR"}}}
with open(os.path.join(BASE, "oidc.key")) as f:
    _KEY = f.read()
OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": _KEY,
    "OAUTH2_VALIDATOR_CLASS": "dotsite.validator.Validator",
    "SCOPES": {"openid": "OpenID Connect", "profile": "Profile", "email": "Email",
               "offline_access": "Offline access"},
    "DEFAULT_SCOPES": ["openid"],
    "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "PKCE_REQUIRED": True,
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "DEVICE_FLOW_INTERVAL": 1,
    "OAUTH_DEVICE_VERIFICATION_URI": os.environ["DOT_VERIFICATION_URI"],  # else DOT sends null
}
'''

URLS = '''
from django.contrib.auth import authenticate, login
from django.http import HttpResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt
def signin(request):
    """The site's own sign-in form, posted to by the test's browser."""
    user = authenticate(request, username=request.POST.get("username"), password=request.POST.get("password"))
    if user is None:
        return HttpResponse("no", status=403)
    login(request, user)
    return HttpResponse("ok")


urlpatterns = [path("signin/", signin), path("o/", include("oauth2_provider.urls", namespace="oauth2_provider"))]
'''

VALIDATOR = '''
from oauth2_provider.oauth2_validators import OAuth2Validator


class Validator(OAuth2Validator):
    oidc_claim_scope = None  # every claim below in every ID token

    def get_additional_claims(self, request):
        return {"email": request.user.email, "preferred_username": request.user.username}
'''

SETUP = '''
import django, json, sys
django.setup()
from django.contrib.auth.models import User
from oauth2_provider.models import Application
spec = json.loads(sys.argv[1])
user = User.objects.create_user(spec["user"][0], "alice@example.test", spec["user"][1])
for app in spec["apps"]:
    Application.objects.create(user=user, name=app["client_id"], algorithm="RS256", skip_authorization=True,
                               **app)
'''

NGINX_CONF = """worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
{user}
events {{ worker_connections 64; }}
http {{
  access_log {dir}/access.log;
  client_body_temp_path {dir}/tmp/body;
  proxy_temp_path {dir}/tmp/proxy;
  fastcgi_temp_path {dir}/tmp/fastcgi;
  uwsgi_temp_path {dir}/tmp/uwsgi;
  scgi_temp_path {dir}/tmp/scgi;
  limit_req_zone $throttle_key zone=token:1m rate=1r/m;
  limit_req_status 429;
  server {{
    listen 127.0.0.1:{port};
    set $throttle_key "";
    location = /o/token/ {{
      if (-f {dir}/throttle) {{
        set $throttle_key $binary_remote_addr;
        add_header Retry-After {retry_after} always;
      }}
      limit_req zone=token;
      proxy_pass http://127.0.0.1:{upstream};
      proxy_set_header Host $http_host;
    }}
    location / {{
      proxy_pass http://127.0.0.1:{upstream};
      proxy_set_header Host $http_host;
    }}
  }}
}}
"""


def nginx_available():
    return os.access(NGINX, os.X_OK)


class DjangoOAuthToolkit:
    """One DOT server behind one nginx; `apps` are dicts of Application fields (`client_id`,
    `client_type`, `authorization_grant_type`, `client_secret`, `redirect_uris`)."""

    def __init__(self, directory, apps):
        self.dir = directory
        self.apps = apps
        self.upstream = free_port()
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        self.issuer = self.base + "/o"
        self.procs = []
        self.cookie = None

    # --- lifecycle

    def start(self, timeout=60):
        python = sdk_venv.venv_python("dot", PACKAGES)  # raises SkipTest without PyPI
        site = os.path.join(self.dir, "dotsite")
        os.makedirs(site, exist_ok=True)
        for name, text in (("__init__.py", ""), ("settings.py", SETTINGS), ("urls.py", URLS),
                           ("validator.py", VALIDATOR)):
            with open(os.path.join(site, name), "w") as f:
                f.write(text)
        subprocess.run(["openssl", "genrsa", "-out", os.path.join(site, "oidc.key"), "2048"],
                       check=True, capture_output=True)
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="dotsite.settings", PYTHONPATH=self.dir,
                   DOT_VERIFICATION_URI=self.base + "/o/device/")
        manage = [python, "-m", "django"]
        subprocess.run(manage + ["migrate", "-v", "0"], check=True, capture_output=True, env=env, timeout=300)
        subprocess.run([python, "-c", SETUP, json.dumps({"user": USER, "apps": self.apps})],
                       check=True, capture_output=True, env=env, timeout=120)
        self.django_log = open(os.path.join(self.dir, "django.log"), "wb")
        self.procs.append(subprocess.Popen(manage + ["runserver", "--noreload", "127.0.0.1:%d" % self.upstream],
                                           stdout=self.django_log, stderr=subprocess.STDOUT, env=env))
        front = os.path.join(self.dir, "nginx")
        os.makedirs(os.path.join(front, "tmp"), exist_ok=True)
        conf = os.path.join(front, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(dir=front, port=self.port, upstream=self.upstream, retry_after=RETRY_AFTER,
                                      user="user root root;" if os.geteuid() == 0 else ""))
        self.front = front
        self.procs.append(subprocess.Popen([NGINX, "-p", front, "-e", os.path.join(front, "error.log"), "-c", conf],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
        deadline = time.time() + timeout
        while True:
            try:
                status, _, _ = self.request("GET", "/o/.well-known/openid-configuration")
                if status == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline or any(p.poll() is not None for p in self.procs):
                raise RuntimeError("django-oauth-toolkit or nginx did not start: " + self.log_text())
            time.sleep(0.2)
        status, headers, _ = self.request("POST", "/signin/", form={"username": USER[0], "password": USER[1]})
        assert status == 200, status
        self.cookie = headers["set-cookie"].split(";", 1)[0]

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if getattr(self, "django_log", None):
            self.django_log.close()

    def log_text(self):
        out = []
        for path in ("django.log", "nginx/error.log"):
            try:
                with open(os.path.join(self.dir, path), errors="replace") as f:
                    out.append(f.read()[-1500:])
            except OSError:
                pass
        return "\n".join(out)

    # --- the front

    def throttle(self, on=True):
        """Rate-limit the token endpoint (nginx `limit_req`, 1 a minute) from now on, or stop."""
        flag = os.path.join(self.front, "throttle")
        if on:
            open(flag, "w").close()
        elif os.path.exists(flag):
            os.unlink(flag)

    def token_requests(self):
        """The token-endpoint lines of nginx's access log: (status, line)."""
        try:
            with open(os.path.join(self.front, "access.log")) as f:
                lines = f.read().splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            m = re.search(r'"POST /o/token/ [^"]*" (\d{3})', line)
            if m:
                out.append((int(m.group(1)), line))
        return out

    def wait_for_token_requests(self, count, timeout=5):
        """Waits until nginx has logged `count` token requests (it logs once a reply is sent, so
        a client can see the reply first); returns the number logged."""
        deadline = time.time() + timeout
        while len(self.token_requests()) < count and time.time() < deadline:
            time.sleep(0.02)
        return len(self.token_requests())

    # --- HTTP

    def request(self, method, path, form=None, headers=None, cookie=None):
        """(status, headers with lower-case names, body bytes), through nginx; no redirect followed."""
        return loopback_http.request(self.port, method, path, form=form, headers=headers, cookie=cookie)

    def token(self, form, basic=None):
        """A token-endpoint POST as any client would send it: (status, JSON body)."""
        headers = {}
        if basic:
            import base64
            pair = ":".join(urllib.parse.quote_plus(x) for x in basic)
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        status, _, body = self.request("POST", "/o/token/", form=form, headers=headers)
        try:
            return status, json.loads(body)
        except ValueError:
            return status, {"body": body[:200].decode(errors="replace")}

    # --- the user's side

    def approve_device(self, user_code):
        """Enter the user code on the device page, then accept, as the signed-in user."""
        status, headers, body = self.request("POST", "/o/device/", form={"user_code": user_code}, cookie=self.cookie)
        assert status == 302, (status, body[:300])
        confirm = urllib.parse.urlsplit(headers["location"]).path
        status, headers, body = self.request("POST", confirm, form={"action": "accept"}, cookie=self.cookie)
        assert status == 302, (status, body[:300])

    def authorize(self, url):
        """The browser's part: open the authorization URL signed in; DOT (skip_authorization)
        redirects at once: return that Location (the loopback redirect with code and state)."""
        parts = urllib.parse.urlsplit(url)
        status, headers, body = self.request("GET", parts.path + "?" + parts.query, cookie=self.cookie)
        assert status == 302, (status, headers, body[:300])
        return headers["location"]


if __name__ == "__main__":
    # A manual look: python3 dot_provider.py DIR starts one and prints its issuer.
    server = DjangoOAuthToolkit(sys.argv[1], [])
    server.start()
    print(server.issuer, flush=True)
    try:
        time.sleep(3600)
    finally:
        server.stop()
