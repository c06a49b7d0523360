// Process-tree helpers on Linux /proc: the descendants of a process and their resident memory (VmRSS).
import fs from 'node:fs';

function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: the fields after its last ')' are fixed.
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(after[1]);
  } catch {
    return undefined;
  }
}

/** All live descendants of `root` (children, grandchildren, …). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const ppid = parentOf(pid);
    if (ppid === undefined) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

export function commandName(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Resident set size of a process in bytes (0 when it is gone). */
export function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Chromium processes below `root` (the browsers the pools launched, with their renderers and helpers). */
export function chromiumPids(root: number): number[] {
  return descendants(root).filter((pid) => /chrom/i.test(commandName(pid)));
}

/** This process's RSS plus the RSS of the Chromium processes it launched. */
export function workerRss(): { node: number; chromium: number; total: number; chromiumProcesses: number } {
  const pids = chromiumPids(process.pid);
  const chromium = pids.reduce((sum, pid) => sum + rssBytes(pid), 0);
  const node = process.memoryUsage().rss;
  return { node, chromium, total: node + chromium, chromiumProcesses: pids.length };
}

/** Proportional set size in bytes (shared pages split between the processes sharing them; 0 when unreadable). */
export function pssBytes(pid: number | 'self'): number {
  try {
    const match = /^Pss:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Like workerRss, but proportional (PSS): what the worker's processes really add up to. */
export function workerPss(): { node: number; chromium: number; total: number } {
  const chromium = chromiumPids(process.pid).reduce((sum, pid) => sum + pssBytes(pid), 0);
  const node = pssBytes('self');
  return { node, chromium, total: node + chromium };
}

/** A Chromium process's role, from the `--type=` (and `--utility-sub-type=`) of its command line; none: the browser. */
export function chromiumRole(pid: number): string {
  let cmdline = '';
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return 'gone';
  }
  const type = /--type=(\S+)/.exec(cmdline)?.[1];
  if (type === undefined) return 'browser';
  if (type !== 'utility') return type;
  const sub = /--utility-sub-type=(\S+)/.exec(cmdline)?.[1] ?? '';
  return `utility:${sub.replace(/\.mojom\./, '.').replace(/^.*\./, '') || 'other'}`;
}

/** A process's PSS split as smaps_rollup gives it: anonymous, file-backed and shared-memory pages (bytes). */
export interface PssSplit {
  pss: number;
  anon: number;
  file: number;
  shmem: number;
}

export function pssSplit(pid: number | 'self'): PssSplit {
  let text = '';
  try {
    text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return { pss: 0, anon: 0, file: 0, shmem: 0 };
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return { pss: kb('Pss'), anon: kb('Pss_Anon'), file: kb('Pss_File'), shmem: kb('Pss_Shmem') };
}
