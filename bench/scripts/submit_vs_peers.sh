#!/usr/bin/env bash
# Submit throughput, Regatta vs Slurm's sbatch, in one run on this machine.
#
#   bench/scripts/submit_vs_peers.sh [BUILD_DIR]     (default build/default)
#
# 1. Regatta API: bench/api/submit_bench (real gRPC client → auth → validation → dedup → one
#    fsync'd log append per 1000-job batch), 5 repetitions, medians.
# 2. Regatta CLI: `regatta submit` of a 10 000-job file against `regatta up` (YAML parsing,
#    batching, gRPC), timed with hyperfine when present, else with `date`.
# 3. Slurm 22.05: ../shared/peers/slurm_bench.sh in loop mode (N x `sbatch --wrap=true`);
#    skipped with SKIP_SLURM=1. It installs slurm-wlm and munge on first use.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build/default}
regatta=$build/cmd/regatta/regatta
echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== Regatta submit API (batches of 1000, durable)"
"$build/bench/api/submit_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  2>/dev/null | grep -E '_median|_mean' | awk '{for(i=1;i<=NF;i++) if ($i ~ /items_per_second/) print "RESULT regatta-api", $1, $i}'

echo "== Regatta CLI: regatta submit of 10 000 jobs"
work=$(mktemp -d -t regatta-submit-bench.XXXX)
trap 'kill $up_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
"$regatta" up --data-dir "$work/data" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
  --set logging.level=warn > "$work/up.out" 2> "$work/up.err" &
up_pid=$!
for _ in $(seq 100); do grep -q 'gRPC: ' "$work/up.out" && break; sleep 0.1; done
server=$(sed -n 's/.*gRPC: //p' "$work/up.out")
"$regatta" --server "$server" queue create bench > /dev/null
printf 'queue: bench\njobSet: s\njobs:\n  - command: [/bin/true]\n    resources: {requests: {cpu: 100m, memory: 64Mi}}\n    count: 10000\n' > "$work/jobs.yaml"
runs=5
start=$(date +%s.%N)
for _ in $(seq $runs); do "$regatta" --server "$server" submit "$work/jobs.yaml" -o json > /dev/null; done
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v r="$runs" \
  'BEGIN { t=(e-s)/r; printf "RESULT regatta-cli 10000 jobs in %.3f s (%.0f jobs/s, mean of %d)\n", t, 10000/t, r }'

if [[ "${SKIP_SLURM:-0}" != 1 ]]; then
  echo "== Slurm 22.05 sbatch (loop of sbatch --wrap=true)"
  MODES=loop SLOTS=${SLOTS:-64} bash "$here/../shared/peers/slurm_bench.sh" "${SLURM_N:-1000}" 2>&1 \
    | grep RESULT || echo "slurm peer failed (see its output)"
fi
