#!/usr/bin/env bash
# Checks deploy/kubernetes without a cluster:
#  1. job.yaml against the Kubernetes API's JSON schemas, strictly (unknown
#     fields refused), with kubernetes-validate (PyPI; scripts/setup.sh
#     installs it);
#  2. the shard count agrees (completions, parallelism, --shard .../N), the
#     job is Indexed and never retried;
#  3. every shard's arguments, as the kubelet will expand them, pass
#     poolbench's own checks (`run --dry-run`) and name one plan;
#  4. with --metrics-listen, its port is a containerPort and the one the
#     prometheus.io/port annotation names;
#  5. gather.sh parses (shellcheck when installed, else bash -n).
#
#   deploy/kubernetes/validate.sh [JOB.yaml]   (POOLBENCH: the binary; default poolbench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
job=${1:-$here/job.yaml}
poolbench=${POOLBENCH:-poolbench}
python3 -c 'import kubernetes_validate' 2>/dev/null || {
    echo "kubernetes-validate is missing: python3 -m pip install kubernetes-validate (scripts/setup.sh does)" >&2
    exit 2
}
python3 -m kubernetes_validate --strict --quiet "$job"

start=$(date -u -d '+10 min' +%Y-%m-%dT%H:%M:%SZ)
python3 - "$job" "$poolbench" "$start" <<'PY'
import re, subprocess, sys, yaml

path, poolbench, start = sys.argv[1:]
job = yaml.safe_load(open(path))
spec = job["spec"]
def fail(why):
    sys.exit(f"{path}: {why}")
if spec.get("completionMode") != "Indexed":
    fail("completionMode must be Indexed (JOB_COMPLETION_INDEX is the shard)")
if spec.get("backoffLimit") != 0:
    fail("backoffLimit must be 0: a retried shard measures other windows")
pod = spec["template"]["spec"]
if pod.get("restartPolicy") != "Never":
    fail("restartPolicy must be Never")
container = pod["containers"][0]
args = [str(a) for a in container["args"]]
shard = next((a for a in args if "$(JOB_COMPLETION_INDEX)" in a), None)
m = re.fullmatch(r"\$\(JOB_COMPLETION_INDEX\)/(\d+)", shard or "")
if not m or args[args.index(shard) - 1] != "--shard":
    fail("args need --shard $(JOB_COMPLETION_INDEX)/N")
n = int(m.group(1))
if spec["completions"] != n or spec["parallelism"] != n:
    fail(f"completions ({spec['completions']}), parallelism ({spec['parallelism']}) and --shard .../{n} differ")
if "$(START_AT)" not in args or args[args.index("$(START_AT)") - 1] != "--start-at":
    fail("args need --start-at $(START_AT)")
if not {"--quiet", "-q"} & set(args) or "json" not in args:
    fail("the pod log must be the JSON alone: --format json --quiet")
if "--metrics-listen" in args:
    port = args[args.index("--metrics-listen") + 1].rsplit(":", 1)[-1]
    ports = {str(p.get("containerPort")) for p in container.get("ports", [])}
    notes = spec["template"].get("metadata", {}).get("annotations", {})
    if port not in ports or str(notes.get("prometheus.io/port")) != port:
        fail(f"--metrics-listen port {port} must be a containerPort and the prometheus.io/port annotation")
env = {e["name"]: e["value"] for e in container.get("env", [])}
env["START_AT"] = start
hashes = set()
for i in range(n):
    env["JOB_COMPLETION_INDEX"] = str(i)
    # The kubelet's expansion of $(VAR) in args.
    argv = [re.sub(r"\$\((\w+)\)", lambda v: env.get(v.group(1), v.group(0)), a) for a in args]
    argv = [a for a in argv if a not in ("--quiet", "-q")] + ["--dry-run"]
    run = subprocess.run([poolbench] + argv, capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"shard {i}: poolbench {' '.join(argv)}: {run.stderr.strip()}")
    hashes.add(run.stdout.split()[1])
    print(f"shard {i}/{n}: " + "; ".join(l.strip() for l in run.stdout.splitlines() if " runs " in l))
if len(hashes) != 1:
    fail(f"the shards' plans differ: {sorted(hashes)}")
print(f"{path}: valid (Kubernetes schema, strict), {n} shards of plan {hashes.pop()}")
PY

if command -v shellcheck >/dev/null; then
    shellcheck "$here/gather.sh" "$here/validate.sh"
else
    bash -n "$here/gather.sh"
fi
