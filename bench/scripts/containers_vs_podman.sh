#!/usr/bin/env bash
# Containerised jobs, Regatta vs a bare podman loop, in one run on this machine: N jobs that run
# /bin/true in the busybox test image, from the start of the submit until every job succeeded.
#
#   bench/scripts/containers_vs_podman.sh [BUILD_DIR]     (default build/default)
#
# Env: N=200 jobs; REPS=3 (medians reported); P=2 jobs at once (CPU per job = cores / P, so the
#      local executor runs P at a time; the bare loop runs `xargs -P P`).
# 1. Regatta: `regatta up` (embedded everything, podman runtime), `regatta submit` of an N-job
#    file with `image: localhost/busybox:1.35`, then `regatta watch` until all N succeeded.
# 2. The floor: `seq N | xargs -P P podman run --rm ...` with the same flags the executor passes
#    (runc, cgroupfs, host network, capped ulimits), which is what any podman-driven executor
#    is bounded by.
# 3. The OCI runtime alone for comparison: `runc run` of the same rootfs (unpacked once), serial.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build/default}
regatta=$build/cmd/regatta/regatta
N=${N:-200}
REPS=${REPS:-3}
P=${P:-2}
image=localhost/busybox:1.35
source "$here/bench/scripts/lib.sh"
bench_machine_line
bench_workdir regatta-containers-bench
"$here/scripts/test-images.sh" busybox

cpu_milli=$(( $(nproc) * 1000 / P ))
podman_flags=(--runtime runc --cgroup-manager cgroupfs --events-backend file)
nofile=$(ulimit -Hn); [ "$nofile" = unlimited ] && nofile=1048576
nproc_limit=$(ulimit -Hu); { [ "$nproc_limit" = unlimited ] || (( nproc_limit > 32768 )); } && nproc_limit=32768
run_flags=(run --rm --network host --log-driver none --ulimit "nofile=$nofile:$nofile"
           --ulimit "nproc=$nproc_limit:$nproc_limit")

times=()
for rep in $(seq "$REPS"); do
  start_regatta_up
  "$regatta" --server "$server" queue create bench > /dev/null
  printf 'queue: bench\njobSet: c%s\njobs:\n  - image: %s\n    command: [/bin/true]\n    resources: {requests: {cpu: %sm, memory: 64Mi}}\n    count: %s\n' \
    "$rep" "$image" "$cpu_milli" "$N" > "$work/jobs.yaml"
  start=$(date +%s.%N)
  "$regatta" --server "$server" submit "$work/jobs.yaml" -o json > /dev/null
  "$regatta" --server "$server" watch bench "c$rep" --timeout 900s > "$work/watch.out"
  end=$(date +%s.%N)
  t=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e-s }')
  times+=("$t")
  awk -v t="$t" -v n="$N" -v r="$rep" 'BEGIN { printf "  regatta rep %d: %d jobs in %.3f s (%.1f jobs/s)\n", r, n, t, n/t }'
  stop_regatta_up

  start=$(date +%s.%N)
  seq "$N" | xargs -P "$P" -I{} podman "${podman_flags[@]}" "${run_flags[@]}" \
    --memory 64m --memory-swap 64m --cpus "$(awk -v m="$cpu_milli" 'BEGIN{printf "%.3f", m/1000}')" \
    "$image" /bin/true
  end=$(date +%s.%N)
  t=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e-s }')
  ptimes+=("$t")
  awk -v t="$t" -v n="$N" -v r="$rep" 'BEGIN { printf "  podman loop rep %d: %d runs in %.3f s (%.1f/s)\n", r, n, t, n/t }'
done
median=$(median_of "${times[@]}")
pmedian=$(median_of "${ptimes[@]}")
awk -v t="$median" -v n="$N" -v r="$REPS" -v p="$P" \
  'BEGIN { printf "RESULT regatta-up %d container jobs (P=%d) submit->all succeeded in %.3f s (%.1f jobs/s, median of %d)\n", n, p, t, n/t, r }'
awk -v t="$pmedian" -v n="$N" -v r="$REPS" -v p="$P" \
  'BEGIN { printf "RESULT podman-loop xargs -P%d podman run --rm x%d in %.3f s (%.1f/s, median of %d)\n", p, n, t, n/t, r }'
awk -v a="$median" -v b="$pmedian" 'BEGIN { printf "RESULT ratio regatta/podman-loop %.3f (budget <= 1.1)\n", a/b }'

# The OCI runtime alone: runc on an unpacked bundle, serial (no image handling, no conmon).
if command -v runc > /dev/null; then
  bundle="$work/bundle"
  mkdir -p "$bundle/rootfs"
  cid=$(podman "${podman_flags[@]}" create "$image" /bin/true)
  podman "${podman_flags[@]}" export "$cid" | tar -C "$bundle/rootfs" -xf -
  podman "${podman_flags[@]}" rm "$cid" > /dev/null
  (cd "$bundle" && runc spec && sed -i 's/"terminal": true/"terminal": false/; s/"sh"/"\/bin\/true"/' config.json)
  start=$(date +%s.%N)
  for i in $(seq 50); do runc --root "$work/runc-state" run --bundle "$bundle" "bench-$i" > /dev/null; done
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN { printf "RESULT runc-run serial x50: %.1f ms per container\n", (e-s)*1000/50 }'
fi
