#!/usr/bin/env bash
# End-to-end scheduling throughput with simulated nodes: N zero-duration jobs from the start of
# the submit until every job has succeeded, through the real server, scheduler and executor API
# (`regatta up` without its embedded executor + `regatta executor --simulated`), no processes.
#
#   bench/scheduler/sim_executor_throughput.sh [BUILD_DIR]     (default build/default)
#
# Env: N=20000 jobs; NODES=1000 simulated nodes of NODE_CPU=32 cpu and 128Gi; CPU=1 per job
#      (N <= NODES * NODE_CPU / CPU: every job fits at once); QUEUES=1 (jobs split evenly);
#      REPS=3 (median reported); DURATION=0s (regatta.io/simulated-duration of each job).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build/default}
regatta=$build/cmd/regatta/regatta
N=${N:-20000}
NODES=${NODES:-1000}
NODE_CPU=${NODE_CPU:-32}
CPU=${CPU:-1}
QUEUES=${QUEUES:-1}
REPS=${REPS:-3}
DURATION=${DURATION:-0s}
echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "N=$N jobs of cpu $CPU, duration $DURATION, in $QUEUES queue(s); $NODES nodes of $NODE_CPU cpu"

work=$(mktemp -d -t regatta-sim-bench.XXXX)
up_pid=""
exec_pid=""
stop() { [[ -n "$1" ]] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null || true; }
cleanup() {
  stop "$exec_pid"
  stop "$up_pid"
  rm -rf "$work"
}
trap cleanup EXIT
cpu_seconds() {  # user + system time of PID (fields 14 and 15 after the command name)
  sed 's/^.*) //' "/proc/$1/stat" | awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($12 + $13) / hz }'
}
median_of() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END { print a[int((NR+1)/2)] }'; }
wait_for() {  # FILE PATTERN: up to 30 s
  for _ in $(seq 300); do grep -q "$2" "$1" && return 0; sleep 0.1; done
  echo "no '$2' in $1" >&2; cat "$1" >&2; return 1
}

times=()
for rep in $(seq "$REPS"); do
  rm -rf "$work/data"
  "$regatta" up --data-dir "$work/data" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
    --set logging.level=warn --set executor.embedded=false > "$work/up.out" 2> "$work/up.err" &
  up_pid=$!
  wait_for "$work/up.out" 'gRPC: '
  server=$(sed -n 's/.*gRPC: //p' "$work/up.out")
  "$regatta" --server "$server" executor --simulated --nodes "$NODES" --node-cpu "$NODE_CPU" \
    --node-memory 128Gi --set logging.level=warn > "$work/exec.out" 2> "$work/exec.err" &
  exec_pid=$!
  wait_for "$work/exec.out" 'executor is running'
  per_queue=$(( N / QUEUES ))
  for q in $(seq "$QUEUES"); do
    "$regatta" --server "$server" queue create "bench$q" > /dev/null
    printf 'queue: bench%s\njobSet: run%s\njobs:\n  - command: [/bin/true]\n    resources: {requests: {cpu: "%s", memory: 1Gi}}\n    annotations: {regatta.io/simulated-duration: %s}\n    count: %s\n' \
      "$q" "$rep" "$CPU" "$DURATION" "$per_queue" > "$work/jobs$q.yaml"
  done
  start=$(date +%s.%N)
  for q in $(seq "$QUEUES"); do
    "$regatta" --server "$server" submit "$work/jobs$q.yaml" -o json > /dev/null
  done
  submitted=$(date +%s.%N)
  for q in $(seq "$QUEUES"); do
    "$regatta" --server "$server" watch "bench$q" "run$rep" --timeout 900s > "$work/watch$q.out"
  done
  end=$(date +%s.%N)
  tail -1 "$work/watch$QUEUES.out"
  t=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e-s }')
  times+=("$t")
  awk -v t="$t" -v n="$(( per_queue * QUEUES ))" -v r="$rep" -v s="$start" -v u="$submitted" \
    'BEGIN { printf "  rep %d: %d jobs in %.3f s (%.0f jobs/s; submit %.3f s)\n", r, n, t, n/t, u-s }'
  # CPU seconds each process used (start-up included): where the time goes.
  echo "    cpu: server $(cpu_seconds "$up_pid") s, executor $(cpu_seconds "$exec_pid") s"
  stop "$exec_pid"; exec_pid=""
  stop "$up_pid"; up_pid=""
done
median=$(median_of "${times[@]}")
awk -v t="$median" -v n="$(( N / QUEUES * QUEUES ))" -v r="$REPS" -v nodes="$NODES" \
  'BEGIN { printf "RESULT sim-executor %d jobs on %d simulated nodes submit->all succeeded in %.3f s (%.0f jobs/s, median of %d)\n", n, nodes, t, n/t, r }'
