#!/usr/bin/env bash
# Builds the container images the tests use, offline, once (each is kept in podman's store):
#   localhost/busybox:1.35                   from Debian's busybox-static (about 1 s)
#   localhost/regatta-python:3.11-kfp2.7.0   Debian 12 minbase with python3 and pip, from
#                                            debootstrap (a few minutes once; needs the Debian
#                                            mirror), plus the project's stand-in for the kfp
#                                            runtime (tests/images/kfp-standin) recorded as kfp 2.7.0
# Usage: scripts/test-images.sh [busybox|python|probe]
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

build_python() {
  local image=localhost/regatta-python:3.11-kfp2.7.0
  if podman_cmd image exists "$image"; then return 0; fi
  command -v debootstrap > /dev/null ||
    { echo "test-images: debootstrap missing (apt-get install debootstrap)" >&2; exit 1; }
  local mirror="${REGATTA_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
  local here work
  here="$(cd "$(dirname "$0")/.." && pwd)"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  if ! debootstrap --variant=minbase --include=python3,python3-pip bookworm "$work/rootfs" \
      "$mirror" > "$work/debootstrap.log" 2>&1; then
    echo "test-images: debootstrap from $mirror failed:" >&2
    tail -5 "$work/debootstrap.log" >&2
    exit 1
  fi
  local root="$work/rootfs"
  local site
  site="$(chroot "$root" python3 -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
  mkdir -p "$root$site"
  cp -r "$here/tests/images/kfp-standin/kfp" "$root$site/"
  # pip then finds kfp==2.7.0 installed (a compiled component's `pip install kfp==2.7.0`).
  local info="$root$site/kfp-2.7.0.dist-info"
  mkdir -p "$info"
  printf 'Metadata-Version: 2.1\nName: kfp\nVersion: 2.7.0\nSummary: Regatta test stand-in\n' \
    > "$info/METADATA"
  echo pip > "$info/INSTALLER"
  echo kfp > "$info/top_level.txt"
  (cd "$root$site" && find kfp kfp-2.7.0.dist-info -type f -printf '%p,,\n') > "$info/RECORD"
  # Tests look for this file to tell the image's files from the host's.
  echo "regatta python test image" > "$root/etc/regatta-python-image"
  # As in the python images kfp users build from: pip may install next to Debian's packages.
  rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
  tar -C "$root" -cf "$work/rootfs.tar" .
  podman_cmd import --quiet --change 'CMD ["/bin/bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
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
  python) build_python ;;
  probe) probe ;;
  *) echo "test-images: unknown image '$want'" >&2; exit 2 ;;
esac
