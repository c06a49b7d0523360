#!/usr/bin/env bash
# rclone v1.76.0, whose `rclone serve s3` is the S3-compatible server the shared run store's tests run against
# (conditional puts work; Debian's rclone 1.60 has no `serve s3`, and SeaweedFS/MinIO do not install here).
# Built with `go install` from the Go module proxy into a cache outside the clone (a fresh CI clone reuses it),
# rebuilt only when missing or of another version. Prints the binary's path.
set -euo pipefail
RCLONE_VERSION="v1.76.0"
cache="${CUA_CACHE_DIR:-$HOME/.cache/durable-cua}"
bin="$cache/bin/rclone-$RCLONE_VERSION"
say() { printf '[rclone] %s\n' "$*" >&2; }
ready() { [ -x "$bin/rclone" ] && "$bin/rclone" version 2>/dev/null | head -1 | grep -Eqx "rclone ${RCLONE_VERSION}(-DEV)?"; }
# One build at a time (two setups at once would write the same binary): the second waits, then finds it ready.
mkdir -p "$cache"
exec 9>"$cache/.rclone.lock"
if ! ready && ! flock -n 9; then
  say "another setup is building rclone; waiting for it"
  flock 9
fi
if ! ready; then
  go="$(command -v go || true)"
  [ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
  [ -n "$go" ] || { say "ERROR: Go is needed to build rclone $RCLONE_VERSION (install Go or put it on PATH)"; exit 1; }
  say "building rclone $RCLONE_VERSION with go install into $bin (about 5 min on 2 cores, once)"
  started=$(date +%s)
  mkdir -p "$bin"
  # GOFLAGS=-trimpath keeps the binary independent of the module cache's location; CGO off: a static binary.
  CGO_ENABLED=0 GOBIN="$bin" GOFLAGS=-trimpath "$go" install "github.com/rclone/rclone@$RCLONE_VERSION" >&2
  say "built in $(( $(date +%s) - started ))s"
fi
[ -x "$bin/rclone" ] || { say "ERROR: $bin/rclone is missing after the build"; exit 1; }
printf '%s\n' "$bin/rclone"
