"""A server that misbehaves, for tests: poolbench must end its run with
errors counted by kind (or no errors where the protocol says to wait or
resend), never hang, never use unbounded memory.

    python3 hostile_server.py MODE

listens on 127.0.0.1 (a free port), prints `PORT <n>` and serves until
its stdin closes. HTTP/1.1 modes answer every request the same broken way:
  garbage          bytes that are not HTTP, then close
  endless-chunked  a chunked body that never ends
  huge-header      a 10 MB header line
  absurd-length    Content-Length 99999999999999999999, a few bytes, close
HTTP/2 modes (prior knowledge, with the h2 package):
  h2-zero-streams  SETTINGS_MAX_CONCURRENT_STREAMS 0 for 300 ms, then 100
  h2-goaway        answers five requests per connection, then GOAWAY
                   (last stream id: the fifth); later streams unprocessed
  h2-refuse        RST_STREAM REFUSED_STREAM on every other stream
  h2-garbage       after the SETTINGS, frames of random bytes
"""
import os
import socket
import sys
import threading
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings

MODE = sys.argv[1]


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    return True


def http1(conn):
    while read_request(conn):
        if MODE == "garbage":
            conn.sendall(os.urandom(512))
            return
        if MODE == "endless-chunked":
            conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            while True:
                conn.sendall(b"400\r\n" + b"x" * 1024 + b"\r\n")
        if MODE == "huge-header":
            conn.sendall(b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * (10 << 20) + b"\r\n\r\n")
            return
        if MODE == "absurd-length":
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 99999999999999999999\r\n\r\nabc")
            return


def h2_serve(conn):
    config = h2.config.H2Configuration(client_side=False)
    c = h2.connection.H2Connection(config=config)
    raise_at = None
    if MODE == "h2-zero-streams":
        c.local_settings = h2.settings.Settings(
            client=False,
            initial_values={h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 0},
        )
        raise_at = time.monotonic() + 0.3
    c.initiate_connection()
    conn.sendall(c.data_to_send())
    if MODE == "h2-garbage":
        time.sleep(0.05)
        conn.sendall(os.urandom(4096))
        return
    conn.settimeout(0.05)
    answered = 0
    while True:
        if MODE == "h2-zero-streams" and raise_at and time.monotonic() >= raise_at:
            c.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100})
            conn.sendall(c.data_to_send())
            raise_at = None
        try:
            data = conn.recv(65536)
        except socket.timeout:
            continue
        if not data:
            return
        try:
            events = c.receive_data(data)
        except Exception:
            return
        for e in events:
            if not isinstance(e, h2.events.RequestReceived):
                continue
            sid = e.stream_id
            if MODE == "h2-refuse" and (sid // 2) % 2 == 1:
                c.reset_stream(sid, h2.errors.ErrorCodes.REFUSED_STREAM)
                continue
            if MODE == "h2-goaway" and answered >= 5:
                continue
            c.send_headers(sid, [(":status", "200"), ("content-length", "2")])
            c.send_data(sid, b"ok", end_stream=True)
            answered += 1
            if MODE == "h2-goaway" and answered == 5:
                c.close_connection(last_stream_id=sid)
        conn.sendall(c.data_to_send())


def handle(conn):
    try:
        if MODE.startswith("h2-"):
            h2_serve(conn)
        else:
            http1(conn)
    except OSError:
        pass
    finally:
        conn.close()


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(1024)
print("PORT", listener.getsockname()[1], flush=True)


def accept():
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


threading.Thread(target=accept, daemon=True).start()
sys.stdin.read()
