"""A keel-conformance --exec server in Python's standard library that routes as the specification asks.

Not keel, and written from docs/conformance.md: it serves the manifest's routes with each handler's
answer, and answers what the framework owns in routing itself: 404 for a path no route matches, 405
with Allow (RFC 9110 §15.5.6) for a method the path does not serve, HEAD as GET without a body
(RFC 9110 §9.3.2), OPTIONS as any other method. Tests run the shipped suite's routing cases against it
under every --group mode (harness/conformance/grouping.test.ts).
"""
import json, re, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

manifest = json.load(open(sys.argv[1]))
case_header = manifest["case_header"]
PROBLEM = "https://keel.dev/errors/"


def route_regex(route):
    out = []
    for seg in route.split("/"):
        m = re.fullmatch(r"\{(\w+)(?::(\w+))?\}", seg)
        if not m:
            out.append(re.escape(seg))
        elif m.group(2) == "path":
            out.append(".+")
        elif m.group(2) == "int":
            out.append(r"[+-]?\d+")
        else:
            out.append("[^/]+")
    return re.compile("^" + "/".join(out) + "$")


routes = [(c["method"].upper(), route_regex(c["route"]), c) for c in manifest["cases"]]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, body=None, headers=None, content_type="application/json"):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def problem(self, status, slug, title, detail, headers=None):
        body = {"type": PROBLEM + slug, "title": title, "status": status, "detail": detail}
        self.reply(status, body, headers, "application/problem+json")

    def handle_any(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?", 1)[0]
        method = self.command
        matched = [(m, c) for m, rx, c in routes if rx.match(path)]
        if not matched:
            return self.problem(404, "not-found", "Resource Not Found", "No route matches %s %s" % (method, path))
        served = {m for m, _ in matched}
        if "GET" in served:
            served.add("HEAD")
        lookup = "GET" if method == "HEAD" and "HEAD" not in {m for m, _ in matched} else method
        cases = [c for m, c in matched if m == lookup]
        if not cases:
            allow = ", ".join(sorted(served))
            return self.problem(405, "method-not-allowed", "Method Not Allowed", "%s is not allowed for %s" % (method, path), {"Allow": allow})
        case = next((c for c in cases if c["id"] == self.headers.get(case_header)), cases[0])
        answer = case["handler_response"]
        if "error" in answer:
            body = {"type": PROBLEM + "error", "title": "Error", "status": answer["status"], **answer["error"]}
            return self.reply(answer["status"], body, content_type="application/problem+json")
        body = None if answer["status"] in (204, 304) else answer.get("body")
        self.reply(answer["status"], body, answer.get("headers"))

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = handle_any

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
