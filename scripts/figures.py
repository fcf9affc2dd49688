#!/usr/bin/env python3
"""The current figures, quoted from bench/results into README.md.

Each bench script keeps its latest result in bench/results/NAME.md (the
command, the date, the machine, the commit, then its output). This script
quotes the lines that hold its verdicts (those naming a target, a load's
summary, and the rows of a table whose header names one) between the
`figures:begin` and `figures:end` markers: all of them in docs/figures.md,
one line per script (a miss first) in README.md.

    scripts/figures.py          rewrite both blocks
    scripts/figures.py --check  exit 1 if either block is not current
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
README = ROOT / "README.md"
FIGURES = ROOT / "docs" / "figures.md"
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
        # "target" as a word ("(target >= 1.0x)"), not a path (target/release);
        # a bound checked ("…: MET", "…: NOT MET").
        names_target = (re.search(r"\btarget\b(?!/)", line)
                        or re.match(r"^\s*(met|NOT MET)\s", line)
                        or re.search(r": (NOT )?MET$", line.rstrip()))
        # A load's summary ("pg: 1,781 req/s, …") heads its verdicts.
        summary = re.match(r"^[a-z0-9-]+: +[\d,.]+ req/s", line)
        if names_target or summary or in_table:
            out.append(line.rstrip())
        # A table whose header names the target: its rows follow.
        in_table = in_table or ("target" in line and re.match(r"^\s+\S+\s{2,}", line) is not None)
    return out


def results():
    """(path, text, verdict lines) for each script's latest result."""
    for path in sorted(RESULTS.glob("*.md")):
        text = path.read_text()
        m = re.search(r"^```\n(.*?)^```", text, re.S | re.M)
        yield path, text, (verdicts(m.group(1)) if m else [])


def full_block(link_prefix):
    """Every script's verdict lines, for docs/figures.md."""
    parts = [BEGIN, ""]
    for path, text, lines in results():
        rel = path.relative_to(ROOT)
        parts.append(
            f"[`{header(text, 'command').strip('`')}`]({link_prefix}{rel}), {header(text, 'date')}, "
            f"commit {header(text, 'commit')}:"
        )
        parts += ["", "```", *(lines or ["(no verdict lines)"]), "```", ""]
    parts.append(END)
    return "\n".join(parts)


def headline(lines):
    """The line that says most: how many targets were met (and the first
    miss), else the paired ratio, else a table's last row with its target."""
    checks = [line.strip() for line in lines if re.match(r"^\s*(met|NOT MET)\s", line)]
    if checks:
        misses = [c for c in checks if c.startswith("NOT MET")]
        first = f": {misses[0]}" if misses else ""
        return f"{len(checks) - len(misses)} of {len(checks)} met{first}"
    # tune-accuracy: whether the same question got the same answer.
    for line in lines:
        if "picks agree" in line:
            return line.strip().lstrip("- ")
    for line in lines:
        if line.strip().startswith("paired:") or "NOT MET" in line:
            return line.strip()
    for i, line in enumerate(lines):
        target = re.search(r"\(target[^)]*\)", line)
        if target and re.match(r"^\s+\S+\s{2,}", line):
            rows = []
            for row in lines[i + 1:]:
                if "target" in row or not re.match(r"^\s+\d", row):
                    break
                rows.append(row)
            if rows:
                names = line.split()
                return f"{names[0]}={rows[-1].split()[0]}: {' '.join(rows[-1].split()[1:])} {target.group(0)}"
    return lines[0].strip() if lines else "(no verdict lines)"


def short_block():
    """One row per script, for README.md."""
    parts = [BEGIN, "", "| script, latest run | verdict (every line in [docs/figures.md](docs/figures.md#current-results)) |", "|---|---|"]
    for path, text, lines in results():
        rel = path.relative_to(ROOT)
        cmd = header(text, "command").strip("`")
        cell = headline(lines).replace("|", "\\|")
        parts.append(f"| [`{cmd}`]({rel}), {header(text, 'date')[:10]} | `{cell}` |")
    parts += ["", END]
    return "\n".join(parts)


def rewrite(path, block):
    """`path` with its block replaced, or None if it has no block."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        return text, None
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text, text[:start] + block + text[end:]


def main():
    stale = []
    for path, block in ((README, short_block()), (FIGURES, full_block("../"))):
        text, current = rewrite(path, block)
        if current is None:
            print(f"{path.relative_to(ROOT)} has no figures block ({BEGIN!r} … {END!r})", file=sys.stderr)
            return 2
        if "--check" in sys.argv[1:]:
            if current != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(current)
    if stale:
        print(f"{', '.join(stale)}: the figures are not those in bench/results: run scripts/figures.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
