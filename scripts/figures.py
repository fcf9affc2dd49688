#!/usr/bin/env python3
"""The current figures, quoted from bench/results into README.md.

Each bench script keeps its latest result in bench/results/NAME.md (the
command, the date, the machine, the commit, then its output). This script
writes the lines that hold its verdicts (those naming a target, and the
rows of a table whose header names one) into README.md between the
`figures:begin` and `figures:end` markers, one block per script.

    scripts/figures.py          rewrite the block in README.md
    scripts/figures.py --check  exit 1 if README.md's block is not current
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
README = ROOT / "README.md"
BEGIN = "<!-- figures:begin (scripts/figures.py writes this block from bench/results) -->"
END = "<!-- figures:end -->"


def header(text, key):
    m = re.search(rf"^- {key}: (.*)$", text, re.M)
    return m.group(1).strip() if m else "?"


def verdicts(output):
    """The lines of a script's output that hold its verdicts."""
    out, in_table = [], False
    for line in output.splitlines():
        if not line.strip():
            in_table = False
            continue
        names_target = "target" in line or re.match(r"^\s*(met|NOT MET)\s", line)
        # A load's summary ("pg: 1,781 req/s, …") heads its verdicts.
        summary = re.match(r"^[a-z0-9-]+: +[\d,.]+ req/s", line)
        if names_target or summary or in_table:
            out.append(line.rstrip())
        # A table whose header names the target: its rows follow.
        in_table = in_table or ("target" in line and re.match(r"^\s+\S+\s{2,}", line) is not None)
    return out


def block():
    parts = [BEGIN, ""]
    for path in sorted(RESULTS.glob("*.md")):
        text = path.read_text()
        m = re.search(r"^```\n(.*?)^```", text, re.S | re.M)
        lines = verdicts(m.group(1)) if m else []
        rel = path.relative_to(ROOT)
        parts.append(
            f"[`{header(text, 'command').strip('`')}`]({rel}), {header(text, 'date')}, "
            f"commit {header(text, 'commit')}:"
        )
        parts.append("")
        parts.append("```")
        parts.extend(lines or ["(no verdict lines)"])
        parts.append("```")
        parts.append("")
    parts.append(END)
    return "\n".join(parts)


def main():
    readme = README.read_text()
    if BEGIN not in readme or END not in readme:
        print(f"README.md has no figures block ({BEGIN!r} … {END!r})", file=sys.stderr)
        return 2
    start, end = readme.index(BEGIN), readme.index(END) + len(END)
    current = readme[:start] + block() + readme[end:]
    if "--check" in sys.argv[1:]:
        if current != readme:
            print("README.md's figures are not those in bench/results: run scripts/figures.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main())
