# Shared by the benchmark scripts (source it). Expects `regatta` (the binary) to be set before
# start_regatta_up is called.

# One line naming the machine and its load, printed at the top of every benchmark.
bench_machine_line() {
  echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
}

median_of() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END { print a[int((NR+1)/2)] }'; }

# A scratch directory in $work, removed (and `regatta up` stopped) when the script exits.
bench_workdir() {
  work=$(mktemp -d -t "$1.XXXX")
  up_pid=""
  trap 'bench_cleanup' EXIT
}
bench_cleanup() {
  [[ -n "${up_pid:-}" ]] && kill "$up_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}

# Starts `regatta up` on a fresh $work/data with loopback port-0 listeners and any extra flags;
# sets up_pid and server (host:port of its gRPC listener).
start_regatta_up() {
  rm -rf "$work/data"
  "$regatta" up --data-dir "$work/data" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
    --set logging.level=warn "$@" > "$work/up.out" 2> "$work/up.err" &
  up_pid=$!
  for _ in $(seq 100); do grep -q 'gRPC: ' "$work/up.out" && break; sleep 0.1; done
  server=$(sed -n 's/.*gRPC: //p' "$work/up.out")
}

stop_regatta_up() {
  kill "$up_pid"; wait "$up_pid" 2>/dev/null || true; up_pid=""
}
