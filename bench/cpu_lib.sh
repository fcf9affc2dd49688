# CPU per completed request, shared by bench/cpu-per-request.sh (sourced
# after bench/lib.sh, from the project root).

# Run CMD under bench/cpu_time.py: its stdout into $bench_tmp/NAME.out, the
# CPU its whole process (and the children it waited for) used into
# $bench_tmp/NAME.cpu as "USER SYS WALL". cpu_run NAME CMD [ARGS...]
cpu_python=$(command -v python3)
cpu_run() {
    local name=$1
    shift
    "$cpu_python" bench/cpu_time.py "$bench_tmp/$name.cpu" "$@" >"$bench_tmp/$name.out" 2>"$bench_tmp/$name.err" || {
        echo "$name failed: $*" >&2
        tail -5 "$bench_tmp/$name.err" >&2
        return 1
    }
}

# User + system seconds of the last cpu_run NAME (CPU=user: user only).
cpu_seconds() {
    awk -v only="${CPU:-all}" '{printf "%.6f\n", only == "user" ? $1 : $1 + $2}' "$bench_tmp/$1.cpu"
}

# Completed requests (measured, warm-up and after the window) and
# successful req/s from poolbench's JSON in $bench_tmp/NAME.out; fails on
# any error counted. Prints "REQUESTS RPS".
poolbench_counts() {
    python3 - "$bench_tmp/$1.out" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
assert c["errors"]["total"] == 0, c["errors"]
print(c["requests"] + c["warmup_requests"] + c["after_end"], c["throughput_rps"])
PY
}

# Throwaway PostgreSQL or Redis (KIND pg|redis) for one protocol's rounds;
# sets $url. cpu_services_stop stops it (and the EXIT trap, if still running).
cpu_services=
cpu_services_start() {
    cpu_services=$(mktemp -d /tmp/poolbench-services.XXXXXX)
    trap 'bench_rc=$?; cpu_services_stop; bench_cleanup' EXIT
    scripts/services.sh start "$cpu_services" "$1" >/dev/null
    url=$(cat "$cpu_services/$1/url")
}
cpu_services_stop() {
    [ -n "$cpu_services" ] || return 0
    scripts/services.sh stop "$cpu_services" >/dev/null || true
    rm -rf "$cpu_services"
    cpu_services=
}

# Stop the nginx or Go greeter one protocol started (bench/lib.sh's
# start_nginx, start_go_greeter), by PID.
cpu_stop_servers() {
    if [ -n "${nginx_pid:-}" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
    if [ -n "${go_greeter_pid:-}" ]; then kill "$go_greeter_pid" 2>/dev/null || true; wait "$go_greeter_pid" 2>/dev/null || true; fi
    nginx_pid='' go_greeter_pid=''
}

# One round's line and its record in $bench_tmp/rounds:
# cpu_round PROTO ROUND PEER PEER_CPU PEER_REQS PEER_RPS PB_CPU PB_REQS PB_RPS
cpu_round() {
    python3 - "$@" <<'PY' | tee -a "$bench_tmp/rounds"
import sys
proto, rnd, peer = sys.argv[1:4]
pc, pn, pr, bc, bn, br = map(float, sys.argv[4:10])
pus, bus = pc / pn * 1e6, bc / bn * 1e6
print(f"{proto} round {rnd}: {peer} {pus:6.2f} us/req {pr:10.0f} req/s   "
      f"poolbench {bus:6.2f} us/req {br:10.0f} req/s   cpu {bus / pus:.2f}x  throughput {br / pr:.2f}x")
PY
}

# Per protocol: the median CPU ratio, the rounds at or under the goal
# (CPU ratio <= GOAL with throughput >= FLOOR x the peer's), and the verdict;
# exits 1 when a protocol met it in fewer than a majority of its rounds.
cpu_summary() {
    python3 - "$bench_tmp/rounds" "$1" "$2" "$bench_tmp/figures" <<'PY'
import re, statistics, sys
path, goal, floor, figures = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rounds = {}
for line in open(path):
    m = re.match(r"(\S+) round \d+: (\S+) .* cpu ([0-9.]+)x  throughput ([0-9.]+)x", line)
    rounds.setdefault((m[1], m[2]), []).append((float(m[3]), float(m[4])))
failed = []
for (proto, peer), rs in rounds.items():
    met = sum(c <= goal and t >= floor for c, t in rs)
    ok = met * 2 > len(rs)
    print(f"{proto:6} vs {peer:16} median cpu/req poolbench/{peer} {statistics.median(c for c, _ in rs):.2f}x  "
          f"median throughput {statistics.median(t for _, t in rs):.2f}x  "
          f"rounds <= {goal}x: {met} of {len(rs)}: {'MET' if ok else 'NOT MET'}")
    with open(figures, "a") as f:
        f.write(f"{proto} cpu per request vs {peer}\t{statistics.median(c for c, _ in rs):.3f}\tx\n")
        f.write(f"{proto} throughput vs {peer}\t{statistics.median(t for _, t in rs):.3f}\tx\n")
    if not ok:
        failed.append(proto)
sys.exit(1 if failed else 0)
PY
}
