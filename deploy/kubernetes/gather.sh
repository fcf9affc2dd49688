#!/usr/bin/env bash
# Waits for poolbench's Indexed Job to finish, takes each shard's result
# from its pod's log and merges them with `poolbench merge`.
#
#   deploy/kubernetes/gather.sh [JOB] [OUT.json]    (defaults: poolbench, merged.json)
#
# Needs Kubernetes 1.28 or later (the completion index as a pod label).
# Environment: NAMESPACE (kubectl's current one if unset), POOLBENCH (the
# binary that merges; default: poolbench on PATH), TIMEOUT_S (default 3600).
set -euo pipefail
job=${1:-poolbench}
out=${2:-merged.json}
poolbench=${POOLBENCH:-poolbench}
kc=(kubectl)
[ -n "${NAMESPACE:-}" ] && kc+=(--namespace "$NAMESPACE")

n=$("${kc[@]}" get job "$job" -o jsonpath='{.spec.completions}')
deadline=$(($(date +%s) + ${TIMEOUT_S:-3600}))
while :; do
    read -r ok failed < <("${kc[@]}" get job "$job" \
        -o jsonpath='{.status.succeeded} {.status.failed}{"\n"}')
    [ "${ok:-0}" -ge "$n" ] && break
    if [ "${failed:-0}" -gt 0 ]; then
        echo "job $job: ${failed} shard(s) failed; their logs say why:" >&2
        "${kc[@]}" get pods -l "job-name=$job" \
            -o custom-columns=POD:.metadata.name,SHARD:.metadata.labels.batch\\.kubernetes\\.io/job-completion-index,PHASE:.status.phase >&2
        exit 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "job $job: ${ok:-0} of $n shards done after ${TIMEOUT_S:-3600} s" >&2
        exit 1
    fi
    sleep 5
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for ((i = 0; i < n; i++)); do
    pod=$("${kc[@]}" get pods \
        -l "job-name=$job,batch.kubernetes.io/job-completion-index=$i" \
        --field-selector=status.phase=Succeeded \
        -o jsonpath='{.items[0].metadata.name}')
    # The log is the shard's JSON (run --format json --quiet); anything a
    # runtime printed before it is dropped.
    "${kc[@]}" logs "$pod" | sed -n '/^{$/,$p' >"$dir/shard-$i.json"
done
"$poolbench" merge "$dir"/shard-*.json -o "$out"
echo "merged $n shards into $out" >&2
