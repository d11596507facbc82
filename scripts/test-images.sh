#!/usr/bin/env bash
# Builds the container images the tests use, offline, once (each is kept in podman's store):
#   localhost/busybox:1.35   from Debian's busybox-static (about 1 s)
# Usage: scripts/test-images.sh [busybox|probe]
#   probe: builds busybox, then runs one container of it as the executor would (runc, cgroupfs);
#          exits non-zero saying why when this machine cannot run containers (tests then skip).
set -euo pipefail
want="${1:-busybox}"

podman_cmd() { podman --runtime runc --cgroup-manager cgroupfs --events-backend file "$@"; }

build_busybox() {
  local image=localhost/busybox:1.35
  if podman_cmd image exists "$image"; then return 0; fi
  local bb=/bin/busybox
  [ -x "$bb" ] || { echo "test-images: $bb missing (apt-get install busybox-static)" >&2; exit 1; }
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  mkdir -p "$work/rootfs/bin" "$work/rootfs/etc" "$work/rootfs/tmp"
  cp "$bb" "$work/rootfs/bin/busybox"
  for applet in $("$bb" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$work/rootfs/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' \
    > "$work/rootfs/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' > "$work/rootfs/etc/group"
  # Tests look for this file to tell the image's files from the host's.
  echo "regatta test image" > "$work/rootfs/etc/regatta-test-image"
  chmod 1777 "$work/rootfs/tmp"
  tar -C "$work/rootfs" -cf "$work/rootfs.tar" .
  podman_cmd import --quiet --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin' \
    "$work/rootfs.tar" "$image" > /dev/null
  echo "test-images: built $image"
}

probe() {
  command -v podman > /dev/null || { echo "test-images: podman is not installed" >&2; exit 3; }
  command -v runc > /dev/null || { echo "test-images: runc is not installed" >&2; exit 3; }
  build_busybox
  local out
  if ! out=$(podman_cmd run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
      localhost/busybox:1.35 /bin/true 2>&1); then
    echo "test-images: podman cannot run a container here: $out" >&2
    exit 4
  fi
}

case "$want" in
  busybox) build_busybox ;;
  probe) probe ;;
  *) echo "test-images: unknown image '$want'" >&2; exit 2 ;;
esac
