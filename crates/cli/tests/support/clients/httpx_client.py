"""A client written with httpx (asyncio), for `poolbench serve --check-client`
tests: a pool capped by httpx.Limits.

    python3 httpx_client.py URL --tasks T --requests R [--max-connections N] [--timeout S]

T tasks share one httpx.AsyncClient and each sends R GETs one after
another. --max-connections N gives the client httpx.Limits(max_connections=N)
(absent: httpx's default limits, 100 connections, 20 kept alive); tasks
beyond N wait in the client for a connection (the pool timeout is the
whole run's, so they never fail for waiting).

Bounded: --timeout (default 30 s) caps the whole run. Prints
`ok N failed M` and exits 0 when every request got a 200, 1 otherwise
(the first error goes to stderr)."""
import argparse
import asyncio
import sys

import httpx


async def worker(client, url, requests, counts):
    for _ in range(requests):
        try:
            resp = await client.get(url)
            if resp.status_code != 200:
                raise RuntimeError(f"GET {url}: {resp.status_code}")
            counts["ok"] += 1
        except Exception as e:  # noqa: BLE001 - counted and reported
            if counts["failed"] == 0:
                print(f"httpx_client.py: {e!r}", file=sys.stderr)
            counts["failed"] += 1


async def run(args):
    counts = {"ok": 0, "failed": 0}
    kwargs = {"timeout": httpx.Timeout(args.timeout), "trust_env": False}
    if args.max_connections is not None:
        kwargs["limits"] = httpx.Limits(max_connections=args.max_connections)
    async with httpx.AsyncClient(**kwargs) as client:
        tasks = [worker(client, args.url, args.requests, counts) for _ in range(args.tasks)]
        await asyncio.wait_for(asyncio.gather(*tasks), args.timeout)
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("url")
    p.add_argument("--tasks", type=int, default=20, help="concurrent tasks")
    p.add_argument("--requests", type=int, default=5, help="GETs per task")
    p.add_argument("--max-connections", type=int, help="httpx.Limits(max_connections=N)")
    p.add_argument("--timeout", type=float, default=30.0, help="cap on the whole run, seconds")
    args = p.parse_args()
    try:
        counts = asyncio.run(run(args))
    except asyncio.TimeoutError:
        print(f"httpx_client.py: not done within {args.timeout} s", file=sys.stderr)
        return 1
    print(f"ok {counts['ok']} failed {counts['failed']}")
    return 0 if counts["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
