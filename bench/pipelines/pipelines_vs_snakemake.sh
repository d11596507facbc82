#!/usr/bin/env bash
# Pipeline orchestration, Regatta vs Snakemake, in one run on this machine.
#
#   bench/pipelines/pipelines_vs_snakemake.sh [BUILD_DIR]     (default build/default)
#
# Env: N=1000 fan-out steps; C=100 chain steps; REPS=3 (median reported);
#      SIMULATED=1 runs the steps on `regatta up --simulated-nodes 10` (no processes: the
#      orchestration alone); SKIP_SNAKEMAKE=1 skips the peer; STEP_CPU (default 10m) per step;
#      STEP_SLEEP=S makes every step sleep S seconds first (default 0).
# Orchestration per step: the cold chain's server time per step less the step's own process,
# measured as C sequential posix_spawns of the same `sh -c` (as the executor starts it) right
# before each cold chain; the median over the repetitions of each pair's difference.
# Regatta: `regatta up`, then `regatta pipeline run FILE --watch` of
#   fanout.json  a ParallelFor over N items, each step one `sh -c 'echo -n $0 > $1'` process;
#   chain.json   C steps in a line, each reading the previous step's output;
# cold (a new `salt` parameter, so no cache entry matches) and cached (the same salt again: every
# step CACHED, no job). Two figures per run: the wall time of the CLI command (create → watched
# to the end; includes its 50 ms polling), and the server's own create → finish time of the run.
# Snakemake 7.21 (../shared/peers/snakemake_bench.sh): N independent `touch` jobs and a C-step
# chain, cold and warm (up to date), --cores 2. BENCH_TMPDIR (see bench/scripts/lib.sh) places
# both on another file system or directory.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build/default}
regatta=$build/cmd/regatta/regatta
N=${N:-1000}
C=${C:-100}
REPS=${REPS:-3}
STEP_CPU=${STEP_CPU:-10m}
source "$here/bench/scripts/lib.sh"
bench_machine_line
bench_workdir regatta-pipeline-bench
# Simulated steps run no process, so they write no outputs: bare steps.
STEP_SLEEP=${STEP_SLEEP:-0}
python3 "$here/bench/pipelines/make_pipelines.py" "$work/p" "$N" "$C" \
  "$([[ "${SIMULATED:-0}" == 1 ]] && echo bare || echo files)" "$STEP_SLEEP"

start_up() {
  local extra=()
  [[ "${SIMULATED:-0}" == 1 ]] && extra=(--simulated-nodes 10 --set executor.simulated.duration.value=0s)
  start_regatta_up --set pipelines.stepCpu="$STEP_CPU" --set pipelines.stepMemory=8Mi "${extra[@]}"
}

# One `pipeline run --watch`; prints "<wall s> <server s> <cached tasks>".
run_once() {
  local file=$1 salt=$2 t0 t1
  # The previous case's files go to disk now, not 30 s later in the middle of this one (the
  # kernel's writeback of a fan-out's 8000 new inodes took a core for a while).
  sync
  t0=$(date +%s.%N)
  "$regatta" --server "$server" pipeline run "$file" -p salt="$salt" --watch --timeout 600s \
    -o json > "$work/run.json"
  t1=$(date +%s.%N)
  local id; id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$work/run.json")
  "$regatta" --server "$server" run get "$id" -o json > "$work/get.json"
  python3 - "$work/get.json" "$t0" "$t1" <<'PY'
import json, sys
from datetime import datetime
run = json.load(open(sys.argv[1]))
def ts(s): return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
assert run["state"] == "PIPELINE_RUN_STATE_SUCCEEDED", run.get("state")
cached = sum(1 for t in run.get("tasks", []) if t.get("state") == "PIPELINE_TASK_STATE_CACHED")
print(f"{float(sys.argv[3]) - float(sys.argv[2]):.3f} {ts(run['finishTime']) - ts(run['createTime']):.3f} {cached}")
PY
}

# The step's own process, spawned C times in a row the way the executor does (posix_spawn, wait).
process_ms() {
  python3 - "$work/floor" "$C" "$STEP_SLEEP" <<'PY'
import os, sys, time
out, count, sleep = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
os.makedirs(out, exist_ok=True)
script = (f"sleep {sys.argv[3]}; " if sleep > 0 else "") + 'echo -n "$0." > "$1"'
start = time.perf_counter()
for i in range(count):
    pid = os.posix_spawn("/bin/sh", ["sh", "-c", script, f"step-{i}", f"{out}/{i}"], os.environ)
    os.waitpid(pid, 0)
print(f"{(time.perf_counter() - start) / count * 1000:.3f}")
PY
}
declare -A wall server_t
floors=""
for kind in fanout chain; do
  for mode in cold cached; do wall[$kind-$mode]=""; server_t[$kind-$mode]=""; done
done
for rep in $(seq "$REPS"); do
  start_up
  for kind in fanout chain; do
    # The step process's own time is measured right before each cold chain: the host's speed
    # drifts by tens of percent within minutes, and the difference of two figures taken
    # minutes apart would carry that drift.
    if [[ "$kind" == chain && "${SIMULATED:-0}" != 1 ]]; then
      sync  # as before each case: no writeback of the fan-out's files during the floor
      floors+="$(process_ms) "
    fi
    read -r w s cached < <(run_once "$work/p/$kind.json" "rep$rep")
    wall[$kind-cold]+="$w "; server_t[$kind-cold]+="$s "
    echo "  rep $rep $kind cold:   wall $w s, server $s s (cached tasks: $cached)"
    read -r w s cached < <(run_once "$work/p/$kind.json" "rep$rep")
    wall[$kind-cached]+="$w "; server_t[$kind-cached]+="$s "
    echo "  rep $rep $kind cached: wall $w s, server $s s (cached tasks: $cached)"
  done
  stop_regatta_up
done
label=regatta-up; [[ "${SIMULATED:-0}" == 1 ]] && label=regatta-up-simulated
for key in fanout-cold fanout-cached chain-cold chain-cached; do
  # shellcheck disable=SC2086
  w=$(median_of ${wall[$key]}); s=$(median_of ${server_t[$key]})
  printf 'RESULT %s %-14s wall %7.3f s  server %7.3f s  (median of %d; N=%d C=%d)\n' \
    "$label" "$key" "$w" "$s" "$REPS" "$N" "$C"
done

if [[ "${SIMULATED:-0}" != 1 ]]; then
  # Per repetition: the cold chain's server time per step less the process time measured just
  # before it; the median of those.
  python3 - "$C" "$floors" "${server_t[chain-cold]}" "$REPS" "$label" <<'PY'
import statistics, sys
c, reps, label = int(sys.argv[1]), sys.argv[4], sys.argv[5]
chain_ms = [float(s) * 1000 / c for s in sys.argv[3].split()]
floor_ms = [float(f) for f in sys.argv[2].split()]
overhead = [ch - fl for ch, fl in zip(chain_ms, floor_ms)]
print(f"RESULT {label} orchestration   {statistics.median(overhead):.2f} ms per step (cold chain "
      f"{statistics.median(chain_ms):.2f} ms per step, less the step process "
      f"{statistics.median(floor_ms):.2f} ms measured before it; median of {reps} paired; "
      f"each: {' '.join(f'{o:.2f}' for o in overhead)})")
PY
fi

if [[ "${SKIP_SNAKEMAKE:-0}" != 1 ]]; then
  # In the same scratch directory as Regatta's data: both pay the same file system.
  BASE="$work/snakemake" REPS=1 bash "$here/../shared/peers/snakemake_bench.sh" "$N" "$C" |
    grep -E 'RESULT|snakemake [0-9]'
fi
