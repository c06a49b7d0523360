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
# shellcheck source=scripts/go-build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-build-lib.sh"
take_build_lock rclone "rclone $RCLONE_VERSION"
if ! ready; then
  go="$(find_go "rclone $RCLONE_VERSION")"
  say "building rclone $RCLONE_VERSION with go install into $bin (about 5 min on 2 cores, once)"
  started=$(date +%s)
  mkdir -p "$bin"
  # GOFLAGS=-trimpath keeps the binary independent of the module cache's location; CGO off: a static binary.
  CGO_ENABLED=0 GOBIN="$bin" GOFLAGS=-trimpath "$go" install "github.com/rclone/rclone@$RCLONE_VERSION" >&2
  say "built in $(( $(date +%s) - started ))s"
fi
[ -x "$bin/rclone" ] || { say "ERROR: $bin/rclone is missing after the build"; exit 1; }
printf '%s\n' "$bin/rclone"
