#!/usr/bin/env python3
"""Small HTTP/1.1 services with a known capacity, for bench/tune-accuracy.sh.

    limited_http.py workers [--limit 8] [--hold-ms 10]
        "Serves LIMIT at a time": a ThreadingHTTPServer whose handler takes a
        threading.Semaphore(LIMIT) and sleeps HOLD_MS while holding it.
        Requests beyond LIMIT queue inside the server; nothing fails.

    limited_http.py pool-freeze [--limit 15] [--hold-ms 3] [--timeout-s 5]
        Modelled on a FastAPI app with synchronous SQLAlchemy and a pool of
        5 + 10 (QueuePool, FIFO waiters, pool_timeout): each request checks
        out one of LIMIT "connections" (the session of a dependency), works
        HOLD_MS while holding it, then does a nested second checkout from
        the same pool (a helper that opens its own session, e.g. an audit
        row) before giving both back. While fewer than LIMIT requests hold a
        connection there is always one free for the nested checkout. Once
        LIMIT requests hold one each (LIMIT or more in flight), every holder
        waits for a second connection that nobody gives back: the service
        freezes until the checkout timeout (TIMEOUT_S), then answers 500 for
        each timed-out checkout and frees the pool, and it starts again.

Both print `http 127.0.0.1:PORT` as their first line once listening (like
`poolbench serve`), answer every path with a 13-byte body, Content-Length and
keep-alive, set TCP_NODELAY and write each answer in one write (no
delayed-ACK stall), and run until SIGTERM/SIGINT.
"""
import argparse
import collections
import http.server
import signal
import socket
import sys
import threading
import time

BODY = b"hello, world\n"


def answer(status, reason, body=BODY):
    return (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Connection: keep-alive\r\n\r\n"
    ).encode() + body


OK = answer(200, "OK")
POOL_TIMEOUT = answer(500, "Internal Server Error",
                      b"QueuePool limit reached, connection timed out\n")


class FifoPool:
    """A fixed pool with FIFO waiters and a checkout timeout, as
    SQLAlchemy's QueuePool: a returned connection goes to the oldest
    waiter, and a new checkout queues behind waiters already there."""

    def __init__(self, size):
        self.free = size
        self.lock = threading.Lock()
        self.waiters = collections.deque()

    def checkout(self, timeout):
        with self.lock:
            if self.free > 0 and not self.waiters:
                self.free -= 1
                return True
            ev = threading.Event()
            self.waiters.append(ev)
        if ev.wait(timeout):
            return True
        with self.lock:
            if ev.is_set():  # handed over just as the wait timed out
                return True
            self.waiters.remove(ev)
            return False

    def checkin(self):
        with self.lock:
            if self.waiters:
                self.waiters.popleft().set()
            else:
                self.free += 1


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    work = None  # set in main: a function returning the bytes to write

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        self.wfile.write(Handler.work())

    do_POST = do_GET

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default 5 drops SYNs of a burst of connects


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", choices=["workers", "pool-freeze"])
    p.add_argument("--limit", type=int)
    p.add_argument("--hold-ms", type=float)
    p.add_argument("--timeout-s", type=float, default=5.0)
    p.add_argument("--port", type=int, default=0)
    a = p.parse_args()

    if a.model == "workers":
        limit = a.limit or 8
        hold = (10.0 if a.hold_ms is None else a.hold_ms) / 1000
        sem = threading.Semaphore(limit)

        def work():
            with sem:
                time.sleep(hold)
            return OK
    else:
        limit = a.limit or 15
        hold = (3.0 if a.hold_ms is None else a.hold_ms) / 1000
        pool = FifoPool(limit)
        timeout = a.timeout_s

        def work():
            if not pool.checkout(timeout):  # the dependency's session
                return POOL_TIMEOUT
            try:
                time.sleep(hold)
                if not pool.checkout(timeout):  # nested session
                    return POOL_TIMEOUT
                pool.checkin()
                return OK
            finally:
                pool.checkin()

    Handler.work = staticmethod(work)
    server = Server(("127.0.0.1", a.port), Handler)
    print(f"http 127.0.0.1:{server.server_address[1]}", flush=True)
    print(f"model {a.model} limit {limit} hold_ms {hold * 1000:g}", flush=True)

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
