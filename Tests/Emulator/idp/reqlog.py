"""The request log: every request to a provider endpoint, as received, with its answer."""

import json
import threading

from .web import DROP


class RequestLog:
    """Entries are dicts: seq, t (monotonic seconds since start), method, path, query, form,
    body, headers (lower-case names), endpoint, fault (kind or None), status, response."""

    def __init__(self):
        self.lock = threading.Lock()
        self.entries = []

    def record(self, request, endpoint):
        """Add a request; the returned entry is completed by `finish`."""
        body = request.body.decode("utf-8", "replace")
        entry = {"method": request.method, "path": request.path, "query": request.query,
                 "form": request.form, "body": body, "headers": request.headers,
                 "endpoint": endpoint, "t": request.t, "fault": None, "status": None,
                 "response": None}
        with self.lock:
            entry["seq"] = len(self.entries) + 1
            self.entries.append(entry)
        return entry

    def finish(self, entry, response, fault=None):
        """Complete an entry with the response (or DROP) and the kind of fault applied, if any."""
        with self.lock:
            entry.update(status=None if response is DROP else response.status,
                         response=_describe(response), fault=fault)

    def find(self, path_contains=None, grant_type=None, endpoint=None, method=None):
        """Entries matching every given filter, oldest first."""
        with self.lock:
            return [dict(e) for e in self.entries
                    if (path_contains is None or path_contains in e["path"])
                    and (grant_type is None or e["form"].get("grant_type") == grant_type)
                    and (endpoint is None or e["endpoint"] == endpoint)
                    and (method is None or e["method"] == method)]

    def clear(self):
        with self.lock:
            self.entries.clear()


def _describe(response):
    """How a response is shown in the request log: parsed JSON, else text (or "dropped")."""
    if response is DROP:
        return "dropped"
    text = response.body.decode("utf-8", "replace")
    if response.content_type.startswith("application/json"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text[:2000]
