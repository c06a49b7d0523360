# Shared by scripts/rclone.sh and scripts/temporal-server.sh (sourced, not run): the build cache's lock and the Go
# toolchain. Each script defines say() and ready() before sourcing this.

# One build at a time: two setups at once (a test run beside CI, say) would write the same files. The second waits
# for the first, then finds the cache ready. $1: the lock's name, $2: what is built (for the waiting line).
take_build_lock() {
  mkdir -p "$cache"
  exec 9>"$cache/.$1.lock"
  if ! ready && ! flock -n 9; then
    say "another setup is building $2; waiting for it"
    flock 9
  fi
}

# Prints the go binary (PATH, else /usr/local/go/bin/go), or fails naming what needs it. $1: what is built.
find_go() {
  local go
  go="$(command -v go || true)"
  [ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
  [ -n "$go" ] || { say "ERROR: Go is needed to build $1 (install Go or put it on PATH)"; return 1; }
  printf '%s\n' "$go"
}
