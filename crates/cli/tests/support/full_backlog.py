"""A server whose listen queue is full: it listens with a backlog of 0 and
never accepts, and fills the queue itself, so a client's SYN gets no
answer and its connect waits for its own timeout. Prints `PORT N`, then
lives until its stdin closes (the test ends) or 60 s pass."""
import socket
import sys
import threading

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(0)
port = srv.getsockname()[1]
# The queue holds backlog + 1 connections: take them up.
held = []
for _ in range(4):
    c = socket.socket()
    c.setblocking(False)
    try:
        c.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    held.append(c)
print(f"PORT {port}", flush=True)
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
done.wait(60)
