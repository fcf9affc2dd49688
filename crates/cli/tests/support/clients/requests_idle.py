"""A client written with requests, for `poolbench serve --check-client`
tests: a Session that lets its connection sit idle longer than the
server keeps it.

    python3 requests_idle.py URL --requests K --pause P [--timeout S]

One requests.Session sends K GETs, sleeping P seconds between two of
them. With P longer than the server's keep-alive timeout the server has
closed the idle connection by the time the next GET comes; urllib3 notices
the closed socket and dials again, so every GET still succeeds, but the
client raced the server's close K-1 times (on a busy link some such
requests fail with a reset instead).

Bounded: each GET times out after --timeout (default 10 s). Prints
`ok N failed M` and exits 0 when every GET got a 200, 1 otherwise."""
import argparse
import sys
import time

import requests


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("url")
    p.add_argument("--requests", type=int, default=3, help="GETs, one after another")
    p.add_argument("--pause", type=float, default=1.5, help="seconds between two GETs")
    p.add_argument("--timeout", type=float, default=10.0, help="timeout of each GET, seconds")
    args = p.parse_args()
    ok = failed = 0
    with requests.Session() as session:
        session.trust_env = False  # no proxy from the environment: the target is local
        for i in range(args.requests):
            if i > 0:
                time.sleep(args.pause)
            try:
                resp = session.get(args.url, timeout=args.timeout)
                resp.content  # read to the end, so the connection is reusable
                if resp.status_code != 200:
                    raise RuntimeError(f"GET {args.url}: {resp.status_code}")
                ok += 1
            except Exception as e:  # noqa: BLE001 - counted and reported
                print(f"requests_idle.py: {e!r}", file=sys.stderr)
                failed += 1
    print(f"ok {ok} failed {failed}")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
