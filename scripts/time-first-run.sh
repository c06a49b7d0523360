#!/usr/bin/env bash
# Times a newcomer's first run as README's quick start gives it: a fresh clone of this checkout's HEAD (no .tools/,
# no node_modules) with HOME at an empty folder (no npm, pip or build caches), then `npm install` and
# `npx cua demo --yes`, each timed. Chromium comes from apt, outside HOME: the script says whether it was already
# installed, and with --chromium (as root) removes it first and times its install on its own.
#
#   bash scripts/time-first-run.sh [--chromium] [--desktop] [--keep]
#
#   --chromium  remove Debian's chromium first and time `apt-get install chromium` separately (root only; its
#               dependencies and apt's download cache stay, so this times a reinstall, not a first install)
#   --desktop   time `npx cua demo --desktop --yes` as well (after the browser demo, in the same clone)
#   --keep      keep the temporary folder (clone, HOME, logs) and print where it is
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chromium=0 desktop=0 keep=0
for arg in "$@"; do
  case "$arg" in
    --chromium) chromium=1 ;; --desktop) desktop=1 ;; --keep) keep=1 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "time-first-run: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
say() { printf '[time] %s\n' "$*"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
if (echo >/dev/tcp/127.0.0.1/7233) 2>/dev/null; then
  echo "time-first-run: something listens on 127.0.0.1:7233; the demo would use it instead of starting its own server" >&2
  exit 1
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/cua-first-run-XXXXXX")"
[ "$keep" = 1 ] || trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home"
git clone -q "$root" "$tmp/clone"
cd "$tmp/clone"
say "fresh clone of $(git log -1 --format='%h %cd' --date=format:'%Y-%m-%d %H:%M') with HOME=$tmp/home (empty)"
say "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), Node $(node --version), npm $(npm --version)"

chromium_line=""
if [ "$chromium" = 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "time-first-run: --chromium needs root (apt-get)" >&2; exit 1; }
  say "removing Debian's chromium to time its install"
  DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq chromium >/dev/null
  t0=$(now)
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  chromium_line="chromium install (apt-get update + install, outside HOME): $(secs "$t0" "$(now)") s"
  say "$chromium_line"
elif command -v chromium >/dev/null 2>&1; then
  chromium_line="chromium: already installed ($(chromium --version 2>/dev/null | head -1)); not part of the times below"
  say "$chromium_line"
else
  chromium_line="chromium: not installed; the demo's setup installs it (part of the demo's time below)"
  say "$chromium_line"
fi

took=0
run_timed() { # label log command...: runs the command with the empty HOME, sets $took, fails on its failure
  local label="$1" log="$2" t0 rc=0
  shift 2
  t0=$(now)
  HOME="$tmp/home" "$@" </dev/null >"$log" 2>&1 || rc=$?
  took=$(secs "$t0" "$(now)")
  if [ "$rc" != 0 ]; then
    say "$label FAILED (exit $rc) after $took s; its last lines:"
    tail -n 20 "$log"
    exit 1
  fi
  say "$label: $took s"
}
run_timed "npm install" "$tmp/npm-install.log" npm install --no-audit --no-fund
install_s=$took
run_timed "npx cua demo --yes" "$tmp/demo.log" npx cua demo --yes
demo_s=$took
setup_line="$(grep -E '^\[setup\] done in' "$tmp/demo.log" | tail -1 || true)"
say "of the demo: setup ${setup_line#\[setup\] done in } (the [setup] lines: $(grep -c '^\[setup\]' "$tmp/demo.log"))"
grep -E '^\[setup\] (installing|temporal|chromium)' "$tmp/demo.log" | sed 's/^/[time]   /' || true
grep -E '^task .*: complete after' "$tmp/demo.log" | sed 's/^/[time]   /' ||
  { say "the demo did not print its task's completion; see $tmp/demo.log"; exit 1; }
say "npm install && npx cua demo --yes: $(( install_s + demo_s )) s"
if [ "$desktop" = 1 ]; then
  run_timed "npx cua demo --desktop --yes" "$tmp/demo-desktop.log" npx cua demo --desktop --yes
  grep -E '^task .*: complete after' "$tmp/demo-desktop.log" | sed 's/^/[time]   /' || true
fi
[ "$keep" = 0 ] || say "kept: $tmp (logs: npm-install.log, demo.log)"
