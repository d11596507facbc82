#!/bin/sh
# Installs node-opcua-server (pinned) once into a cache directory outside the repository and
# prints that directory (its node_modules holds the package). Later runs only check the cache.
# Exit 77 when node or npm is missing or the registry cannot be reached: the e2e test then skips.
#   REGATTA_NODE_OPCUA_CACHE  the cache directory (default $XDG_CACHE_HOME/regatta/...)
set -u
VERSION=2.186.4
CACHE_ROOT=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/regatta
CACHE=${REGATTA_NODE_OPCUA_CACHE:-$CACHE_ROOT/node-opcua-server-$VERSION}

installed() {
  [ -f "$CACHE/.installed" ] && [ -f "$CACHE/node_modules/node-opcua-server/package.json" ]
}

if installed; then echo "$CACHE"; exit 0; fi
command -v node >/dev/null 2>&1 || { echo "node is not installed" >&2; exit 77; }
command -v npm >/dev/null 2>&1 || { echo "npm is not installed" >&2; exit 77; }
mkdir -p "$(dirname "$CACHE")" || { echo "cannot create $(dirname "$CACHE")" >&2; exit 77; }

# One installer at a time; a second run waits and then finds the cache.
exec 9>"$CACHE.lock"
flock 9
if installed; then echo "$CACHE"; exit 0; fi
tmp=$(mktemp -d "$CACHE.tmp.XXXXXX") || exit 77
if ! timeout 600 npm install --prefix "$tmp" --no-audit --no-fund --no-save --loglevel=error \
    --fetch-retries=1 --fetch-timeout=30000 "node-opcua-server@$VERSION" >&2; then
  rm -rf "$tmp"
  echo "npm install node-opcua-server@$VERSION failed (registry unreachable?)" >&2
  exit 77
fi
touch "$tmp/.installed"
rm -rf "$CACHE"
mv "$tmp" "$CACHE"
echo "$CACHE"
