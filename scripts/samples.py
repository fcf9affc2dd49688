#!/usr/bin/env python3
"""The sample outputs in README.md and docs/, from real runs.

Each sample is one run of target/release/poolbench on this machine with
fixed settings, against the built-in server (on loopback, in-process or
`poolbench serve`), or a command on results saved from such runs. Its
result is kept in crates/cli/tests/fixtures/samples/NAME.json, and its text
written into every block of the docs marked

    <!-- sample NAME/VIEW (scripts/samples.py; again, with no load: poolbench ARGS) -->
    ```
    …
    ```
    <!-- /sample -->

VIEW names how that block trims the output: a line `…` stands where
lines were left out. `poolbench ARGS` prints the same output from the
saved result, with no load: the docs test (crates/cli/tests/docs/samples.rs)
runs it and checks that each block has the shape of what the code prints
now (its lines, labels and columns, numbers aside).

    scripts/samples.py              run every sample, then write the blocks (about 5 min)
    scripts/samples.py NAME ...     run only these samples
    scripts/samples.py --rerender   write the blocks from the saved results (seconds, no load)
    scripts/samples.py --list       the samples, and the blocks of each

Build first: cargo build --release -p poolbench.
"""
import http.client
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(os.environ.get("POOLBENCH", ROOT / "target/release/poolbench"))
SAVED = "crates/cli/tests/fixtures/samples"
FIXTURES = "crates/cli/tests/fixtures"
PAGES = ["README.md"] + sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")
)
BUILT_IN = ["--server-delay", "20ms", "--server-max-inflight", "24"]

# name: (the run's arguments, None for a command on saved results;
#        the arguments that print the same from the saved result)
SAMPLES = {
    "tune": (["tune", "-c", "100", *BUILT_IN], None),
    "tune-fleet": (
        ["tune", "-c", "100", *BUILT_IN, "--replicas", "4", "--surge", "0"],
        None,
    ),
    "find-rate": (["tune", "--find-rate", "--slo", "p99<100ms", *BUILT_IN], None),
    "run": (["run"], None),
    "ramp": (["run", "-s", "elastic:4+8", "--ramp", "2..16/2s,16/2s,2/500ms,2/3s"], None),
    "check-client": ("check-client", None),
    "compare-tunes": (
        None,
        ["compare", f"{FIXTURES}/tune-serves-24.json", f"{FIXTURES}/tune-serves-18.json"],
    ),
    "compare-rates": (
        None,
        ["compare", f"{FIXTURES}/rate-serves-24.json", f"{FIXTURES}/rate-serves-18.json"],
    ),
}

MARK = re.compile(
    r"<!-- sample (?P<name>[\w-]+)/(?P<view>[\w.-]+) \(scripts/samples\.py; again, with no load: poolbench (?P<args>[^)]*)\) -->\n"
    r"```\n(?P<body>.*?)```\n<!-- /sample -->",
    re.S,
)


def again(name):
    """The arguments that print the sample from what is saved."""
    run, cmd = SAMPLES[name]
    return cmd if cmd is not None else ["report", f"{SAVED}/{name}.json"]


# --- views: the full output's lines -> the block's lines ---------------


def cut(lines):
    """Drop blank lines at the ends."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def section(lines, first, stop=lambda l: not l.strip()):
    """The lines from the first that starts with `first` up to the first
    that `stop` holds for after it (not included)."""
    start = next(i for i, l in enumerate(lines) if l.startswith(first))
    end = next((i for i in range(start + 1, len(lines)) if stop(lines[i])), len(lines))
    return lines[start:end]


def evidence_trimmed(lines):
    """Each finding's first line of evidence, then `…` for the rest."""
    out, kept = [], None
    for l in lines:
        if l.startswith("! "):
            kept = 0
        elif kept is not None and l.startswith("    "):
            kept += 1
            if kept == 2:
                out.append("    …")
            if kept >= 2:
                continue
        else:
            kept = None
        out.append(l)
    return out


def view_tune_full(lines):
    return cut(evidence_trimmed(lines))


def view_tune_answer_to_limiter(lines):
    """From the start to the adaptive limiter's settings; the capacity
    table and every point left out."""
    end = next(i for i, l in enumerate(lines) if l.startswith("Capacity ("))
    return cut(lines[:end]) + ["…"]


def view_fleet(lines):
    return ["…"] + section(lines, "Fleet (--replicas):") + ["…"]


def view_first_paragraph(lines):
    return section(cut(lines), "") + ["…"]


def view_run_readme(lines):
    summary = section(lines, "Summary", lambda l: not l.strip() or l == "Details")
    table = section(lines, "concurrency 100")
    rec = [l for l in lines if l.startswith("Recommendation:")]
    return ["…"] + summary + ["…"] + table + ["…"] + rec


def view_run_page(lines):
    head = lines[: lines.index("Details") + 2]
    c100 = lines.index("concurrency 100")
    findings_end = next(
        i for i in range(lines.index("Findings"), len(lines)) if not lines[i].strip()
    )
    rec = [l for l in lines if l.startswith("Recommendation:")]
    return head + ["…"] + cut(lines[c100:findings_end]) + ["…", ""] + rec


def view_ramp(lines):
    return ["…"] + section(lines, "ramp of ") + ["…"]


def view_set_line(lines):
    return ["…"] + section(cut(lines), "Set pool size") + ["…"]


def view_whole(lines):
    return cut(lines)


VIEWS = {
    "tune-full": view_tune_full,
    "to-limiter": view_tune_answer_to_limiter,
    "fleet": view_fleet,
    "answer": view_first_paragraph,
    "set-line": view_set_line,
    "readme": view_run_readme,
    "page": view_run_page,
    "ramp": view_ramp,
    "whole": view_whole,
}

# --- runs --------------------------------------------------------------


def poolbench(args, **kw):
    return subprocess.run([str(BIN), *args], cwd=ROOT, text=True, **kw)


def run_sample(name):
    """Run `name` for real; its text output (the result saved beside)."""
    run, _ = SAMPLES[name]
    if run is None:
        return None
    (ROOT / SAVED).mkdir(parents=True, exist_ok=True)
    out = f"{SAVED}/{name}.json"
    started = time.monotonic()
    if run == "check-client":
        text = check_client(out)
    else:
        p = poolbench([*run, "-q", "-o", out] if run[0] == "run" else [*run, "-o", out],
                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if p.returncode not in (0, 1):
            sys.exit(f"samples.py: poolbench {' '.join(run)} exited {p.returncode}")
        text = p.stdout
    print(f"{name}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    return text


def check_client(out):
    """`serve --check-client` watching a `curl` per request, then a Python
    `http.client` connection reused after 1.5 s against a 1 s keep-alive
    (its second and third requests meet the server's close and are sent
    again on a new connection)."""
    server = subprocess.Popen(
        [str(BIN), "serve", "--check-client", "--listen", "127.0.0.1:0", "--client", "curl",
         "--keepalive-timeout", "1s", "-o", out],
        cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    try:
        first = server.stdout.readline().split()
        assert first[0] == "http", first
        host, port = first[1].rsplit(":", 1)
        url = f"http://{host}:{port}/"
        for _ in range(30):
            subprocess.run(["curl", "-s", "-o", "/dev/null", url], check=True)
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        for i in range(3):
            if i:
                time.sleep(1.5)
            for _ in range(2):
                try:
                    conn.request("GET", "/")
                    conn.getresponse().read()
                    break
                except (http.client.HTTPException, ConnectionError):
                    conn.close()
        text, _ = server.communicate(timeout=60)
        conn.close()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return text


# --- the blocks ----------------------------------------------------------


def blocks():
    """(page, match) for every sample block of the docs."""
    for page in PAGES:
        text = (ROOT / page).read_text()
        for m in MARK.finditer(text):
            yield page, m


def write(outputs):
    """Write every block whose sample is in `outputs` (name -> text)."""
    for page in PAGES:
        path = ROOT / page
        text = path.read_text()

        def block(m):
            name, view = m["name"], m["view"]
            if name not in outputs:
                return m[0]
            lines = outputs[name].rstrip("\n").split("\n")
            body = "\n".join(l.rstrip() for l in VIEWS[view](lines))
            return (
                f"<!-- sample {name}/{view} (scripts/samples.py; again, with no load: "
                f"poolbench {' '.join(again(name))}) -->\n```\n{body}\n```\n<!-- /sample -->"
            )

        new = MARK.sub(block, text)
        if new != text:
            path.write_text(new)
            print(f"wrote {page}", file=sys.stderr)


def main(argv):
    if "--list" in argv:
        for page, m in blocks():
            print(f"{m['name']:<14} {m['view']:<15} {page}")
        return 0
    if not BIN.exists():
        sys.exit(f"samples.py: no {BIN}: cargo build --release -p poolbench")
    names = [a for a in argv if not a.startswith("-")] or list(SAMPLES)
    unknown = [n for n in names if n not in SAMPLES]
    if unknown:
        sys.exit(f"samples.py: unknown sample {', '.join(unknown)} (one of {', '.join(SAMPLES)})")
    used = {m["name"] for _, m in blocks()}
    outputs = {}
    for name in names:
        if name not in used:
            print(f"{name}: no block shows it", file=sys.stderr)
            continue
        text = None if "--rerender" in argv else run_sample(name)
        if text is None:
            p = poolbench(again(name), stdout=subprocess.PIPE)
            if p.returncode not in (0, 1):
                sys.exit(f"samples.py: poolbench {' '.join(again(name))} exited {p.returncode}")
            text = p.stdout
        outputs[name] = text
    write(outputs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
