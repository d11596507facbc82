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
  # or /tmp. On this VM /tmp's ext4 block group is so full of recently deleted inodes that a
  # mkdir there takes ~0.8 ms (30 µs elsewhere on the same disk); see docs/benchmarks.md.
  work=$(mktemp -d -p "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}" "$1.XXXX")
  up_pid=""
  trap 'bench_cleanup' EXIT
}
bench_cleanup() {
  [[ -n "${up_pid:-}" ]] && kill "$up_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}

# Starts `regatta up` on a fresh data directory ($work/data.<n>, set as $data) with loopback
# port-0 listeners and any extra flags; sets up_pid and server (host:port of its gRPC listener).
# Earlier data directories stay until the script exits: deleting thousands of files right before
# a run slows every file the run creates (ext4 skips inodes freed in the last ~30 s when it
# allocates, here ~0.3 ms per mkdir instead of ~30 µs), which would be measured as Regatta's.
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
