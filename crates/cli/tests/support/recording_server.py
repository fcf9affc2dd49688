"""An HTTP/1.1 server written with Python's standard library, for tests
that must not depend on poolbench's own server: it answers every request
with 200 and a short body (HEAD: headers only) and keeps what it was sent.
GET /__seen returns, as JSON, each request's method, path, chosen headers
and body, and the client's address ("peer") (that request is not kept). A path starting /sleep/MS/ is
answered after MS milliseconds: a slow service, or a frozen one. A path
starting /limit/N/MS/ is answered after MS milliseconds by at most N
requests at once, the others waiting their turn: a service with N workers.

    python3 recording_server.py PORT_FILE

binds 127.0.0.1 on a free port and writes the port to PORT_FILE."""
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

seen = []
lock = threading.Lock()
limits = {}
KEPT = ("authorization", "content-type", "host", "x-req")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per answer, sent at once: without these, a keep-alive
    # answer's body waits for the ACK of its headers (Nagle's algorithm
    # against the client's delayed ACK, 40 ms).
    wbufsize = -1
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.command == "GET" and self.path == "/__seen":
            with lock:
                out = json.dumps(seen).encode()
            return self.answer(out)
        slow = re.match(r"/sleep/(\d+)/", self.path)
        if slow:
            time.sleep(int(slow.group(1)) / 1000)
        limited = re.match(r"/limit/(\d+)/(\d+)/", self.path)
        if limited:
            n, ms = int(limited.group(1)), int(limited.group(2))
            with lock:
                workers = limits.setdefault(n, threading.Semaphore(n))
            with workers:
                time.sleep(ms / 1000)
        with lock:
            seen.append({
                "method": self.command,
                "path": self.path,
                "headers": {k: self.headers.get(k) for k in KEPT if self.headers.get(k) is not None},
                "body": body.decode("utf-8", "replace"),
                "peer": self.client_address[0],
            })
        self.answer(b"recorded\n")

    def answer(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any


ThreadingHTTPServer.request_queue_size = 1024
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
# A client that gave up on a slow answer closed its connection: not news.
server.handle_error = lambda request, address: None
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
