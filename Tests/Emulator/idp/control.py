"""The control API over HTTP, for shell scripts and non-Python tests. JSON in, JSON out.

GET requests take their arguments from the query string, POST requests from a JSON object
body; each maps onto the Emulator method of the same meaning. Errors: 400 (bad arguments),
404 (unknown path, user code or user), each as {"error": "..."}. Never logged, never faulted.
"""

from .web import json_response


class ControlAPI:
    """Routes `/_control/…` to Emulator methods."""

    def __init__(self, emulator):
        emu = self.emu = emulator
        self.routes = {
            ("GET", "/_control/state"): lambda a: emu.state(),
            ("GET", "/_control/options"): lambda a: emu.options.as_dict(),
            ("POST", "/_control/options"): lambda a: emu.configure(**a),
            ("POST", "/_control/user"): lambda a: emu.set_user(**a),
            ("POST", "/_control/user/flags"): lambda a: emu.set_user_flags(**a),
            ("GET", "/_control/device"): lambda a: emu.device_code(**a),
            ("POST", "/_control/device/approve"): lambda a: emu.approve(**a),
            ("POST", "/_control/device/decline"): lambda a: emu.decline(**a),
            ("POST", "/_control/device/script"): self._script,
            ("POST", "/_control/refresh-tokens"):
                lambda a: {"refresh_token": emu.add_refresh_token(**a)},
            ("POST", "/_control/revoke"): self._revoke,
            ("GET", "/_control/introspect"): self._introspect,
            ("GET", "/_control/faults"): lambda a: {"faults": emu.pending_faults()},
            ("POST", "/_control/faults"): self._add_faults,
            ("POST", "/_control/faults/clear"): lambda a: emu.clear_faults() or {"faults": []},
            ("GET", "/_control/requests"): lambda a: {"requests": emu.requests(**a)},
            ("POST", "/_control/reset"): lambda a: emu.reset() or {"reset": True},
        }

    def handle(self, request):
        action = self.routes.get((request.method, request.path.rstrip("/")))
        if action is None:
            return json_response({"error": f"no control endpoint {request.method} {request.path}",
                                  "endpoints": sorted(f"{m} {p}" for m, p in self.routes)}, 404)
        try:
            args = request.json() if request.method == "POST" else dict(request.query)
            if not isinstance(args, dict):
                raise ValueError("the body must be a JSON object")
            return json_response(action(args))
        except KeyError as e:
            return json_response({"error": f"missing argument {e.args[0]!r}"}, 400)
        except LookupError as e:
            return json_response({"error": str(e.args[0] if e.args else e)}, 404)
        except (ValueError, TypeError) as e:
            return json_response({"error": str(e)}, 400)

    def _script(self, args):
        self.emu.script_device_polls(args["answers"], args.get("user_code"))
        return {"scripted": len(args["answers"])}

    def _revoke(self, args):
        if "token" in args:
            return {"revoked": self.emu.revoke(args["token"])}
        return {"revoked": self.emu.revoke_user(args.get("username"))}

    def _introspect(self, args):
        """What a resource server learns of a token (RFC 7662 §2.2's `active`, and who); with
        `scope`, a token without that scope is inactive, as a mail server refuses a Graph token."""
        info = self.emu.validate_access_token(args["token"])
        if not info or ("scope" in args and args["scope"] not in info["scope"].split()):
            return {"active": False}
        return info

    def _add_faults(self, args):
        """One fault object, or {"faults": [...]}: {"kind", "endpoint", "count", "status", …}."""
        specs = args["faults"] if "faults" in args else [args]
        return {"added": [self.emu.add_fault(**spec) for spec in specs],
                "faults": self.emu.pending_faults()}
