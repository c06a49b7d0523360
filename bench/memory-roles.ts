// The worker's memory by process role (Node; Chromium's browser, GPU, utility and renderer processes), and a table of
// what each role adds per open session between two readings. Used by the concurrency section and bench/memory.ts.
import { chromiumPids, chromiumRole, pssSplit } from './procs';
import type { PssSplit } from './procs';
import { fmtBytes } from './stats';

/** Per role (`worker` is Node, `browser` Chromium's main process, else its `--type=`): processes and PSS, summed. */
export type RoleMemory = Record<string, PssSplit & { processes: number }>;

export function memoryByRole(): RoleMemory {
  const out: RoleMemory = {};
  const add = (role: string, s: PssSplit) => {
    const was = out[role] ?? { processes: 0, pss: 0, anon: 0, file: 0, shmem: 0 };
    out[role] = {
      processes: was.processes + 1,
      pss: was.pss + s.pss,
      anon: was.anon + s.anon,
      file: was.file + s.file,
      shmem: was.shmem + s.shmem,
    };
  };
  add('worker', pssSplit('self'));
  for (const pid of chromiumPids(process.pid)) add(chromiumRole(pid), pssSplit(pid));
  return out;
}

export const totalPss = (m: RoleMemory): number => Object.values(m).reduce((sum, r) => sum + r.pss, 0);

/** What each role added per session from `before` to `after` (bytes of PSS), largest first, with the total. */
export function perSessionByRole(before: RoleMemory, after: RoleMemory, sessions: number): [string, number][] {
  const roles = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const added = roles.map((role): [string, number] => [
    role,
    ((after[role]?.pss ?? 0) - (before[role]?.pss ?? 0)) / Math.max(1, sessions),
  ]);
  added.sort((a, b) => b[1] - a[1]);
  return [...added, ['total', (totalPss(after) - totalPss(before)) / Math.max(1, sessions)]];
}

/** A table: per role, processes and PSS before and after, what it added per session, and the PSS split after. */
export function roleTable(before: RoleMemory, after: RoleMemory, sessions: number): string[][] {
  const rows = perSessionByRole(before, after, sessions).map(([role, perSession]) => {
    const a = role === 'total' ? undefined : before[role];
    const b = role === 'total' ? undefined : after[role];
    return [
      role,
      role === 'total' ? '' : `${a?.processes ?? 0} → ${b?.processes ?? 0}`,
      fmtBytes(role === 'total' ? totalPss(before) : (a?.pss ?? 0)),
      fmtBytes(role === 'total' ? totalPss(after) : (b?.pss ?? 0)),
      fmtBytes(perSession),
      b ? `${fmtBytes(b.anon)} / ${fmtBytes(b.file)} / ${fmtBytes(b.shmem)}` : '',
    ];
  });
  return [['process', 'processes', 'PSS before', 'PSS after', 'per session', 'after: anon / file / shmem'], ...rows];
}
