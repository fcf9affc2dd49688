"""An HTTP/1.1 server from Python's standard library that writes each
answer in two writes (its head, flushed by end_headers, then its body)
with Nagle's algorithm on, as many hand-written services do: the body
waits for the client's delayed ACK of the head (40 ms on Linux).

    python3 nagle_server.py

listens on 127.0.0.1 (a free port), prints `PORT <n>` and serves until
its stdin closes. Paths under /_poolbench/ are 404 (no counters here).
"""
import http.server
import sys
import threading

BODY = b"hello from two writes\n"


class TwoWrites(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path.startswith("/_poolbench/"):
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()  # the first write: the head
        self.wfile.write(BODY)  # the second: the body

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), TwoWrites)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
