#!/usr/bin/env python3
"""The slowest tests of a run, from the logs scripts/timed-test kept.

    scripts/test-times.py DIR [--top N] [--over SECONDS]

Prints the N slowest tests (default 15) with their binary, each test's
time as libtest measured it, the time of each test binary, and names
every test over SECONDS (default 60), which needs a reason to stay that
long. Exit 0 always: it reports, it does not judge.
"""
import argparse
import pathlib
import re

LINE = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)\S* <([0-9.]+)s>")
TOTAL = re.compile(r"^test result: .*finished in ([0-9.]+)s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--over", type=float, default=60.0)
    args = ap.parse_args()
    tests, binaries = [], []
    for log in sorted(pathlib.Path(args.dir).rglob("*.log")):
        # scripts/timed-test names each log PACKAGE.BINARY-HASH.log.
        binary = re.sub(r"-[0-9a-f]{16}\.log$", "", log.name)
        if log.parent != pathlib.Path(args.dir):
            binary = f"{log.parent.name}/{binary}"
        total = 0.0
        for line in log.read_text(errors="replace").splitlines():
            m = LINE.match(line)
            if m:
                tests.append((float(m.group(3)), binary, m.group(1), m.group(2)))
            t = TOTAL.match(line)
            if t:
                total += float(t.group(1))
        binaries.append((total, binary))
    if not tests:
        print("test times: none recorded")
        return
    tests.sort(reverse=True)
    print(f"== the {min(args.top, len(tests))} slowest of {len(tests)} tests")
    for secs, binary, name, outcome in tests[: args.top]:
        mark = "" if outcome == "ok" else f"  ({outcome})"
        print(f"{secs:8.1f} s  {binary:<28} {name}{mark}")
    print("== test binaries (wall time of each, its tests in parallel)")
    for secs, binary in sorted(binaries, reverse=True):
        if secs >= 1.0:
            print(f"{secs:8.1f} s  {binary}")
    long = [t for t in tests if t[0] > args.over]
    if long:
        print(f"== over {args.over:.0f} s (each needs a reason to stay)")
        for secs, binary, name, _ in long:
            print(f"{secs:8.1f} s  {binary} {name}")


if __name__ == "__main__":
    main()
