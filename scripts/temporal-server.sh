#!/usr/bin/env bash
# The Temporal server (go.temporal.io/server, cmd/server) and its SQL schema tool (cmd/tools/sql), v1.29.1: the
# self-hosted cluster the scale-out tests and bench run on PostgreSQL (scripts/cluster.sh starts it). Built with
# `go install` from the Go module proxy into a cache outside the clone, so a fresh CI clone on the same machine reuses
# them; rebuilt only when missing. The module's PostgreSQL schema files and its config folder are copied beside the
# binaries, so the cache does not depend on Go's module cache staying in place. Prints the cache folder.
set -euo pipefail
TEMPORAL_SERVER_VERSION="v1.29.1"
cache="${CUA_CACHE_DIR:-$HOME/.cache/durable-cua}"
dir="$cache/temporal-server-$TEMPORAL_SERVER_VERSION"
say() { printf '[temporal-server] %s\n' "$*" >&2; }
ready() {
  [ -x "$dir/bin/temporal-server" ] && [ -x "$dir/bin/temporal-sql-tool" ] &&
    [ -d "$dir/schema/postgresql/v12/temporal/versioned" ] && [ -f "$dir/config/development-postgres12.yaml" ]
}
# shellcheck source=scripts/go-build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-build-lib.sh"
take_build_lock temporal-server "the Temporal server $TEMPORAL_SERVER_VERSION"
if ! ready; then
  go="$(find_go "the Temporal server $TEMPORAL_SERVER_VERSION")"
  say "building the Temporal server $TEMPORAL_SERVER_VERSION and its SQL tool with go install into $dir (about 4 to 11 min on 2 cores, once)"
  started=$(date +%s)
  tmp="$dir.partial"
  rm -rf "$tmp"
  mkdir -p "$tmp/bin"
  GOBIN="$tmp/bin" GOFLAGS=-trimpath "$go" install "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" >&2
  say "server built in $(( $(date +%s) - started ))s; building the SQL tool"
  GOBIN="$tmp/bin" GOFLAGS=-trimpath "$go" install "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" >&2
  mv "$tmp/bin/server" "$tmp/bin/temporal-server"
  mv "$tmp/bin/sql" "$tmp/bin/temporal-sql-tool"
  src="$("$go" env GOMODCACHE)/go.temporal.io/server@$TEMPORAL_SERVER_VERSION"
  [ -d "$src/schema/postgresql" ] || { say "ERROR: the module source is not at $src"; exit 1; }
  mkdir -p "$tmp/schema"
  cp -r "$src/schema/postgresql" "$tmp/schema/"
  cp -r "$src/config" "$tmp/config"
  chmod -R u+w "$tmp"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  say "built in $(( $(date +%s) - started ))s"
fi
ready || { say "ERROR: $dir is incomplete after the build"; exit 1; }
printf '%s\n' "$dir"
