#!/usr/bin/env bash
# Installs the Debian 12 packages Regatta builds and tests with, skipping those already present.
# Run as root (or with sudo available). docs/dependencies.md says why each one is here.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libsqlite3-dev libpq-dev libyaml-cpp-dev nlohmann-json3-dev
  libspdlog-dev libfmt-dev libcli11-dev libboost-dev libboost-system-dev
  libssl-dev libsodium-dev libjemalloc-dev libb2-dev libudev-dev libxml2-dev
  libcjose-dev libjansson-dev libcurl4-openssl-dev
  prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev clang-14 libclang-rt-14-dev python3-prometheus-client
  curl ca-certificates openssl
  podman runc conmon catatonit uidmap busybox-static debootstrap
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (or install sudo)" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
