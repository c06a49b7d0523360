#!/usr/bin/env bash
# Jaeger v1.76.0 (github.com/jaegertracing/jaeger, cmd/jaeger: the all-in-one built on the OpenTelemetry Collector):
# the real trace receiver the traces test sends OTLP to and reads back through its query API, with in-memory storage.
# Its go.mod has a replace directive, so `go install …@version` refuses it: it is built in a throwaway module that
# requires it as a tool (`go get -tool`), into a cache outside the clone (a fresh CI clone reuses it), rebuilt only when
# missing. Only the traces test (and whoever runs this script) sets it up: not the demo, not setup.sh's default parts.
# Prints the binary's path.
set -euo pipefail
JAEGER_VERSION="v1.76.0"
cache="${CUA_CACHE_DIR:-$HOME/.cache/durable-cua}"
bin="$cache/bin/jaeger-$JAEGER_VERSION"
say() { printf '[jaeger] %s\n' "$*" >&2; }
ready() { [ -x "$bin/jaeger" ]; }
# shellcheck source=scripts/go-build-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-build-lib.sh"
take_build_lock jaeger "Jaeger $JAEGER_VERSION"
if ! ready; then
  go="$(find_go "Jaeger $JAEGER_VERSION")"
  say "building Jaeger $JAEGER_VERSION (cmd/jaeger) with Go into $bin (about 10 min on 2 cores, once)"
  started=$(date +%s)
  work="$cache/.jaeger-build"
  rm -rf "$work"
  mkdir -p "$work" "$bin"
  (
    cd "$work"
    "$go" mod init cua-jaeger-build >/dev/null 2>&1
    GOFLAGS=-mod=mod "$go" get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION" >&2
    # CGO off: a static binary; -trimpath keeps it independent of the module cache's location.
    CGO_ENABLED=0 GOFLAGS=-trimpath "$go" build -o "$bin/jaeger.partial" github.com/jaegertracing/jaeger/cmd/jaeger >&2
  )
  mv "$bin/jaeger.partial" "$bin/jaeger"
  rm -rf "$work"
  say "built in $(( $(date +%s) - started ))s"
fi
ready || { say "ERROR: $bin/jaeger is missing after the build"; exit 1; }
printf '%s\n' "$bin/jaeger"
