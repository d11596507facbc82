# Shared by the benchmark scripts (source it). Expects `regatta` (the binary) to be set before
# start_regatta_up is called.

# One line naming the machine and its load, printed at the top of every benchmark.
bench_machine_line() {
  echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
}

median_of() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END { print a[int((NR+1)/2)] }'; }

# A scratch directory in $work, removed (and `regatta up` stopped) when the script exits.
bench_workdir() {
  # BENCH_TMPDIR: where the scratch directory (and so `regatta up`'s data) goes; default $TMPDIR
  # or /tmp.
  work=$(mktemp -d -p "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}" "$1.XXXX")
  up_pid=""
  trap 'bench_cleanup' EXIT
  bench_fs_line
}

# What one mkdir costs in the scratch directory, printed with the results. This VM's ext4 has
# no journal, and without one ext4 will not reuse an inode freed in the last 5 s (300 s while
# its inode table block is unwritten): each new file or directory scans past them. After a
# test suite or a benchmark deleted thousands of files nearby (this script's own cleanup, for
# the next run), a mkdir takes 0.1-0.8 ms instead of 20-40 µs, and a pipeline step or a job
# creates several files. So the script first waits (up to BENCH_SETTLE seconds, default 90;
# 0: not at all) until a mkdir is back under 40 µs, and says how long it waited. The probe's
# directories stay until the script exits (deleting them would cause the same slowdown).
bench_fs_line() {
  local us waited=0 probe=0
  while true; do
    probe=$((probe + 1))
    us=$(python3 - "$work/mkdir-probe.$probe" <<'PY'
import os, sys, time
os.mkdir(sys.argv[1])
start = time.perf_counter()
for i in range(200):
    os.mkdir(f"{sys.argv[1]}/{i}")
print(round((time.perf_counter() - start) / 200 * 1e6))
PY
)
    if (( us < 40 || waited >= ${BENCH_SETTLE:-90} )); then break; fi
    sleep 5
    waited=$((waited + 5))
  done
  echo "scratch: $work on $(df --output=fstype "$work" | tail -1), one mkdir ${us} µs" \
    "(waited ${waited} s for earlier deletions to settle)"
}
bench_cleanup() {
  [[ -n "${up_pid:-}" ]] && kill "$up_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}

# Starts `regatta up` on a fresh data directory ($work/data.<n>, set as $data) with loopback
# port-0 listeners and any extra flags; sets up_pid and server (host:port of its gRPC listener).
# Earlier data directories stay until the script exits: deleting thousands of files right before
# a run slows every file the run creates (see bench_fs_line), which would be measured as
# Regatta's.
start_regatta_up() {
  bench_data_count=$(( ${bench_data_count:-0} + 1 ))
  data="$work/data.$bench_data_count"
  "$regatta" up --data-dir "$data" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
    --set logging.level=warn "$@" > "$work/up.out" 2> "$work/up.err" &
  up_pid=$!
  for _ in $(seq 100); do grep -q 'gRPC: ' "$work/up.out" && break; sleep 0.1; done
  server=$(sed -n 's/.*gRPC: //p' "$work/up.out")
}

stop_regatta_up() {
  kill "$up_pid"; wait "$up_pid" 2>/dev/null || true; up_pid=""
}
