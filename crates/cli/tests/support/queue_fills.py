"""An HTTP/1.1 keep-alive server whose listen queue fills on command.

Prints `PORT N`, then reads commands on stdin, one a line:
  full  closes every client connection, stops accepting and fills the
        queue itself (a backlog of 0 holds one connection): new SYNs get
        no answer, so a client's connect waits for its own timeout;
  open  lets the fillers go and accepts again.
Lives until its stdin closes (the test ends) or 60 s pass."""
import socket
import sys
import threading
import time

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(0)
srv.settimeout(0.05)
port = srv.getsockname()[1]
lock = threading.Lock()
clients = set()
full = threading.Event()
fillers = []
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def serve(conn):
    buf = b""
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
            while b"\r\n\r\n" in buf:
                _, buf = buf.split(b"\r\n\r\n", 1)
                conn.sendall(ANSWER)
    except OSError:
        return
    finally:
        with lock:
            clients.discard(conn)
        conn.close()


def accept():
    while True:
        if full.is_set():
            time.sleep(0.01)
            continue
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        except OSError:
            return
        with lock:
            clients.add(conn)
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def fill():
    full.set()
    time.sleep(0.1)  # the accept loop has paused
    with lock:
        for c in list(clients):
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    for _ in range(4):
        c = socket.socket()
        c.setblocking(False)
        try:
            c.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(c)


def reopen():
    for c in fillers:
        c.close()
    fillers.clear()
    full.clear()


def commands():
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "full":
            fill()
        elif cmd == "open":
            reopen()
    done.set()


done = threading.Event()
threading.Thread(target=accept, daemon=True).start()
threading.Thread(target=commands, daemon=True).start()
print(f"PORT {port}", flush=True)
done.wait(60)
