#!/usr/bin/env python3
"""Where the CPU goes while a command runs: samples /proc every second, keeps each descendant process's CPU time
(user + system), and prints the share of each kind of process (the Node process running the bench or worker, the
Temporal dev server, Chromium's browser / renderer / GPU / utility processes, others) at the end.

usage: python3 scripts/cpu-share.py -- <command …>     e.g.  … -- npm run bench -- --only concurrency --levels 16
"""
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def snapshot():
    procs = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        rest = stat[stat.rindex(")") + 2 :].split()
        procs[int(pid)] = (int(rest[1]), (int(rest[11]) + int(rest[12])) / TICK, cmd)
    return procs


def kind(cmd):
    if "chromium" in cmd or "chrome" in cmd:
        for t in ("renderer", "gpu-process", "utility"):
            if f"--type={t}" in cmd:
                return f"chromium {t}"
        return "chromium browser" if "--type=" not in cmd else "chromium other"
    if "temporal" in cmd and "server" in cmd and "start-dev" in cmd:
        return "temporal dev server"
    if "node" in cmd or "tsx" in cmd or "npm" in cmd or "vitest" in cmd:
        return "node (bench / worker / workflows)"
    return "other"


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(__doc__)
        return 2
    child = subprocess.Popen(argv)
    cpu = {}  # pid -> (seconds, kind)
    start = time.time()
    while child.poll() is None:
        procs = snapshot()
        tree = {child.pid}
        changed = True
        while changed:
            changed = False
            for pid, (ppid, _, _) in procs.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    changed = True
        for pid in tree:
            if pid in procs:
                cpu[pid] = (procs[pid][1], kind(procs[pid][2]))
        time.sleep(1)
    wall = time.time() - start
    totals = {}
    for seconds, k in cpu.values():
        totals[k] = totals.get(k, 0.0) + seconds
    total = sum(totals.values()) or 1.0
    print(f"\n[cpu-share] {wall:.0f} s wall, {total:.0f} CPU-seconds in {len(cpu)} processes "
          f"({total / wall:.2f} cores busy on average)")
    for k, s in sorted(totals.items(), key=lambda x: -x[1]):
        print(f"[cpu-share] {k:36s} {s:8.1f} s  {100 * s / total:5.1f}%")
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
