#!/usr/bin/env bash
# `poolbench compare` on two saved tunes as a CI capacity gate, on real
# tunes: the built-in server answering after 20 ms, `tune -c 48`, with at
# most 24 requests served at once (the excess waits), the same again, and
# with at most 18. Each tune takes about 2 minutes.
#
#   bench/compare-tunes.sh [--keep DIR]
#
# Prints each tune's figures, both comparisons as `compare` prints them,
# and checks (met / NOT MET):
#   - 24 against 18: the change of serves-at-once and of the peak named
#     significant, and `--fail-if 'peak<-10%'` exits 1;
#   - 24 against 24: no change significant, and the whole gate
#     (peak, knee, serves, pick, p99) exits 0.
# Exits 1 if a check missed. With --keep DIR, the three tunes are also
# written to DIR as tune-serves-{24,24-again,18}.json: the CLI tests'
# fixtures (crates/cli/tests/fixtures) are three such tunes.
set -euo pipefail
cd "$(dirname "$0")/.."
keep=
if [ "${1:-}" = --keep ]; then
    keep=${2:?--keep DIR}
    mkdir -p "$keep"
fi
. bench/lib.sh
build_poolbench
print_machine
echo "commit: $(git rev-parse --short HEAD)"
gate='peak<-10%,knee<-10%,serves<-10%,pick<-10%,p99>+20%'

tune() {
    local inflight=$1 name=$2 from code=0
    from=$(date +%s)
    "$bin" tune -c 48 --server-delay 20ms --server-max-inflight "$inflight" --quiet \
        -o "$bench_tmp/$name.json" >"$bench_tmp/$name.txt" 2>&1 || code=$?
    [ "$code" = 0 ] || { echo "tune $name exited $code:"; cat "$bench_tmp/$name.txt"; exit 1; }
    python3 - "$bench_tmp/$name.json" "$name" "$(($(date +%s) - from))" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
c, p = t["capacity"], t["recommendation"]
ci = c["max_rps_ci95"] or 0
print(f"tune {sys.argv[2]:<15} peak {c['max_rps']:,.0f} ±{ci:,.1f} req/s, knee {c['knee_in_flight']}, "
      f"serves {c['serves_at_once']}, cliff {c['cliff_in_flight']}, pick {p['spec']} "
      f"({p['throughput_rps']:,.0f} req/s, p99 {p['p99_us'] / 1000:.1f} ms), {sys.argv[3]} s")
PY
    [ -z "$keep" ] || cp "$bench_tmp/$name.json" "$keep/tune-$name.json"
}

tune 24 serves-24
tune 24 serves-24-again
tune 18 serves-18

# compare NAME BEFORE AFTER BOUNDS: prints the text, keeps the JSON and
# the exit code.
compare() {
    local name=$1 code=0
    echo
    echo "\$ poolbench compare $2.json $3.json --fail-if '$4'"
    "$bin" compare "$bench_tmp/$2.json" "$bench_tmp/$3.json" --fail-if "$4" \
        -o "$bench_tmp/$name.json" >"$bench_tmp/$name.txt" 2>"$bench_tmp/$name.err" || code=$?
    sed "s|$bench_tmp/||g" "$bench_tmp/$name.txt" "$bench_tmp/$name.err"
    echo "exit $code"
    echo "$code" >"$bench_tmp/$name.code"
}
compare slower serves-24 serves-18 'peak<-10%'
compare same serves-24 serves-24-again "$gate"

echo
python3 - "$bench_tmp" >"$bench_tmp/checks" <<'PY'
import json, sys
tmp = sys.argv[1]
def load(name):
    c = json.load(open(f"{tmp}/{name}.json"))
    return {f["name"]: f for f in c["figures"]}, int(open(f"{tmp}/{name}.code").read())
slower, slower_code = load("slower")
same, same_code = load("same")
def line(ok, what):
    print(f"{'met    ' if ok else 'NOT MET'}  {what}")
def change(f):
    return "–" if f["change_pct"] is None else f"{f['change_pct']:+.1f}%"
for name in ["serves", "peak"]:
    f = slower[name]
    line(f["significant"] is True, f"24 vs 18: {name} {change(f)} named significant ({f['basis']})")
line(slower_code == 1, f"24 vs 18: --fail-if 'peak<-10%' exits 1 (exit {slower_code})")
moved = [n for n, f in same.items() if f["significant"] is True]
line(not moved, f"24 vs 24: no change significant ({', '.join(moved) or 'none'})")
line(same_code == 0, f"24 vs 24: the gate exits 0 (exit {same_code})")
for n in ["peak", "serves"]:
    for pair, figures in [("24 vs 18", slower), ("24 vs 24", same)]:
        if figures[n]["change_pct"] is not None:
            print(f"figure\t{pair} {n} change\t{figures[n]['change_pct']:.1f}\t%")
PY
grep -v '^figure' "$bench_tmp/checks"
grep '^figure' "$bench_tmp/checks" | while IFS=$'\t' read -r _ name value unit; do figure "$name" "$value" "$unit"; done
missed=$(grep -c '^NOT MET' "$bench_tmp/checks" || true)
checks=$(grep -cE '^(met|NOT MET)' "$bench_tmp/checks")
echo "$((checks - missed)) of $checks checks met"
bench_verdict "$([ "$missed" = 0 ] && echo 0 || echo 1)"
