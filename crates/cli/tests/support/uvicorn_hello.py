"""A plain ASGI app under uvicorn at its defaults (it closes keep-alive
connections idle for 5 s: timeout_keep_alive), a server nobody here
tuned.

    python3 uvicorn_hello.py

listens on 127.0.0.1 (a free port), prints `PORT <n>` and serves until
its stdin closes.
"""
import os
import socket
import sys
import threading

import uvicorn


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = b"hello from uvicorn\n"
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def main():
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    # Gone with its parent: stdin closes.
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
