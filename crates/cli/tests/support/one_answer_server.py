"""An HTTP/1.1 server that answers one request per connection and closes
it (`Connection: close`), as servers that do not keep connections alive
do: requests pipelined behind the first are never answered.

    python3 one_answer_server.py [--stop-reading]

With --stop-reading it answers the first request without closing and then
neither reads nor answers again, the connection left open: a server
that stops reading.

listens on 127.0.0.1 (a free port), prints `PORT <n>` and serves until
its stdin closes.
"""
import socketserver
import sys
import threading

ANSWER = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 3\r\n\r\nok\n"
KEPT = b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nok\n"
STOP_READING = "--stop-reading" in sys.argv[1:]


class OneAnswer(socketserver.BaseRequestHandler):
    def handle(self):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            data += chunk
        if not STOP_READING:
            self.request.sendall(ANSWER)
            return
        self.request.sendall(KEPT)
        # Nothing read or answered again, until the server stops.
        self.server.closed.wait()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    server = Server(("127.0.0.1", 0), OneAnswer)
    server.closed = threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.closed.set()
    server.shutdown()


if __name__ == "__main__":
    main()
