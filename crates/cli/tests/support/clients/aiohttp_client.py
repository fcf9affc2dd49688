"""A client written with aiohttp, for `poolbench serve --check-client` tests:
what an asyncio service does to a server with aiohttp's default connector.

    python3 aiohttp_client.py URL --tasks T --requests R [--limit L] [--timeout S]

T tasks share one ClientSession and each sends R GETs one after another
(body read, so the connection goes back to the connector). Without
--limit the session gets aiohttp's default TCPConnector, whose limit of
100 connections quietly caps the requests in flight at 100 however many
tasks there are: the rest wait inside the client for a connection.
--limit L gives TCPConnector(limit=L) instead (0 is aiohttp's "no limit").

Bounded: --timeout (default 30 s) caps the whole run. Prints
`ok N failed M` and exits 0 when every request got a 200, 1 otherwise
(the first error goes to stderr)."""
import argparse
import asyncio
import sys

import aiohttp


async def worker(session, url, requests, counts):
    for _ in range(requests):
        try:
            async with session.get(url) as resp:
                await resp.read()
                if resp.status != 200:
                    raise RuntimeError(f"GET {url}: {resp.status}")
            counts["ok"] += 1
        except Exception as e:  # noqa: BLE001 - counted and reported
            if counts["failed"] == 0:
                print(f"aiohttp_client.py: {e!r}", file=sys.stderr)
            counts["failed"] += 1


async def run(args):
    counts = {"ok": 0, "failed": 0}
    # None: the library's default connector, as `ClientSession()` makes it.
    connector = None if args.limit is None else aiohttp.TCPConnector(limit=args.limit)
    async with aiohttp.ClientSession(connector=connector) as session:
        tasks = [worker(session, args.url, args.requests, counts) for _ in range(args.tasks)]
        await asyncio.wait_for(asyncio.gather(*tasks), args.timeout)
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("url")
    p.add_argument("--tasks", type=int, default=150, help="concurrent tasks")
    p.add_argument("--requests", type=int, default=2, help="GETs per task")
    p.add_argument("--limit", type=int, help="TCPConnector(limit=L); absent: the default connector")
    p.add_argument("--timeout", type=float, default=30.0, help="cap on the whole run, seconds")
    args = p.parse_args()
    try:
        counts = asyncio.run(run(args))
    except asyncio.TimeoutError:
        print(f"aiohttp_client.py: not done within {args.timeout} s", file=sys.stderr)
        return 1
    print(f"ok {counts['ok']} failed {counts['failed']}")
    return 0 if counts["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
