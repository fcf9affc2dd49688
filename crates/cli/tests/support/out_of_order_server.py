"""An HTTP/1.1 server that keeps connections open but answers the
requests of each read in reverse order, as a server that handles
pipelined requests concurrently and writes each answer when it is done
would: in order only when one request arrives at a time. HEAD is answered
without a body, as HTTP requires.

    python3 out_of_order_server.py

listens on 127.0.0.1 (a free port), prints `PORT <n>` and serves until
its stdin closes.
"""
import socketserver
import sys
import threading

BODY = b"ok\n"


def answer(method):
    head = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(BODY)
    return head if method == b"HEAD" else head + BODY


class Reversing(socketserver.BaseRequestHandler):
    def handle(self):
        data = b""
        while True:
            chunk = self.request.recv(1 << 16)
            if not chunk:
                return
            data += chunk
            methods = []
            while b"\r\n\r\n" in data:
                request, data = data.split(b"\r\n\r\n", 1)
                methods.append(request.split(b" ", 1)[0])
            self.request.sendall(b"".join(answer(m) for m in reversed(methods)))


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    server = Server(("127.0.0.1", 0), Reversing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
