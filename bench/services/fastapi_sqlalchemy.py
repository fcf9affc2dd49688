#!/usr/bin/env python3
"""A real FastAPI service with synchronous SQLAlchemy on PostgreSQL, written
with the classic mistake that freezes such deployments under load.

    fastapi_sqlalchemy.py --dsn postgresql://USER:PASS@HOST:PORT/DB
                          [--pool-size 5] [--max-overflow 10]
                          [--pool-timeout 30] [--port 0]

The engine is SQLAlchemy's QueuePool at its defaults (5 + 10 overflow, a
30 s checkout timeout) over psycopg2 (a postgres:// or postgresql:// DSN is
taken as postgresql+psycopg2://). At start it creates and fills a table
fastapi_authors(id, name) with ids 1..1000 (idempotent; its own name, so a
database with another `authors` table is left alone).

    GET /authors/{id}   {"id": ID, "name": "author ID"} (404 if missing)
    GET /               the same as /authors/1

Both endpoints are `async def` and take `db: Session = Depends(get_db)`,
where get_db is the tutorial's plain sync generator
(`db = SessionLocal(); try: yield db; finally: db.close()`), and run a
synchronous SELECT on `db`. FastAPI runs the dependency's setup and teardown
in its threadpool, but the endpoint itself on the event loop, so:

  - the pool checkout (the first db.execute) happens on the event loop and
    blocks it while it waits;
  - the connection goes back to the pool only in the dependency's teardown
    (db.close()), which the event loop has to dispatch to the threadpool
    after the endpoint returns.

While fewer than pool_size + max_overflow (15) requests hold a connection,
checkouts never wait. Once all 15 are held by requests whose teardown the
loop has not yet dispatched and another request reaches its query, that
checkout blocks the only thread that could release them: the whole service
(every endpoint, every connection, accepting) freezes for pool_timeout,
then that request answers 500 (sqlalchemy.exc.TimeoutError "QueuePool
limit ... reached, connection timed out"), the loop runs the pending
teardowns, and requests queued meanwhile may freeze it again.

Served by uvicorn (one worker, asyncio loop, log level warning) on
127.0.0.1:PORT (0: a free port). Prints `http 127.0.0.1:PORT` as its first
line once listening, like `poolbench serve`, and runs until SIGTERM/SIGINT
(which uvicorn handles only once the loop is not frozen).
"""
import argparse
import asyncio
import sys

import uvicorn
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import PlainTextResponse
from sqlalchemy import create_engine, exc, text
from sqlalchemy.orm import Session, sessionmaker

AUTHORS = 1000


def sqlalchemy_url(dsn):
    for prefix in ("postgres://", "postgresql://"):
        if dsn.startswith(prefix):
            return "postgresql+psycopg2://" + dsn[len(prefix):]
    return dsn


def build_app(args):
    engine = create_engine(
        sqlalchemy_url(args.dsn),
        pool_size=args.pool_size,
        max_overflow=args.max_overflow,
        pool_timeout=args.pool_timeout,
    )
    with engine.begin() as conn:
        conn.execute(text(
            "CREATE TABLE IF NOT EXISTS fastapi_authors (id integer PRIMARY KEY, name text NOT NULL)"))
        conn.execute(text(
            "INSERT INTO fastapi_authors SELECT i, 'author ' || i FROM generate_series(1, :n) i "
            "ON CONFLICT (id) DO NOTHING"), {"n": AUTHORS})
    SessionLocal = sessionmaker(autoflush=False, bind=engine)

    def get_db():
        db = SessionLocal()
        try:
            yield db
        finally:
            db.close()

    app = FastAPI()

    def author(db, author_id):
        row = db.execute(text("SELECT id, name FROM fastapi_authors WHERE id = :id"),
                         {"id": author_id}).first()
        if row is None:
            raise HTTPException(status_code=404, detail="author not found")
        return {"id": row.id, "name": row.name}

    @app.get("/authors/{author_id}")
    async def get_author(author_id: int, db: Session = Depends(get_db)):
        return author(db, author_id)  # sync I/O on the event loop: the mistake

    @app.get("/")
    async def root(db: Session = Depends(get_db)):
        return author(db, 1)

    # The same 500 FastAPI gives without it, minus a traceback per request
    # on stderr.
    @app.exception_handler(exc.TimeoutError)
    async def pool_timeout(_request: Request, err: exc.TimeoutError):
        return PlainTextResponse(str(err).split(" (Background")[0] + "\n",
                                 status_code=500)

    return app


async def serve(app, port):
    # uvicorn binds the socket itself, as `uvicorn main:app --port N` does
    # (asyncio then sets TCP_NODELAY on each connection; a socket made here
    # with proto 0 and passed in would not get it, and every answer, written
    # in two writes, would wait for the client's delayed ACK).
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"http 127.0.0.1:{port}", flush=True)
    await task


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", required=True, help="postgresql://USER:PASS@HOST:PORT/DB")
    ap.add_argument("--pool-size", type=int, default=5)
    ap.add_argument("--max-overflow", type=int, default=10)
    ap.add_argument("--pool-timeout", type=float, default=30.0, help="seconds")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    app = build_app(args)
    asyncio.run(serve(app, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
