// The task list's cost column. A task that publishes its cost (the CuaCost search attribute) costs nothing to show;
// for the others the cost is summed from the run folder's model calls (src/trajectory/usage.ts, as the task page's
// usage line) and remembered per task and step: a task is read again only when its step or status moved, so a page of
// 50 costs its reads once, and after that only the tasks that changed since. An ended task is never read twice.
import type { TaskListEntry } from '../client/client';
import { loadEvents, loadVerification } from '../src/trajectory/reader';
import type { RunStore } from '../src/trajectory/store';
import { dollars, usageTotals } from '../src/trajectory/usage';
import type { UsageTotals } from '../src/trajectory/usage';

const REMEMBERED = 5000;
const READS_AT_ONCE = 8;

/** The cost as the list shows it: dollars, `no price` when no call had one, null before the first model call. */
export function costText(t: Pick<UsageTotals, 'calls' | 'costUsd' | 'unpricedCalls'>): string | null {
  if (t.calls === 0) return null;
  if (t.unpricedCalls === t.calls) return 'no price';
  return `${dollars(t.costUsd)}${t.unpricedCalls ? ' + unpriced calls' : ''}`;
}

export class CostColumn {
  private readonly known = new Map<string, { key: string; cost: string | null }>();

  constructor(private readonly store: () => RunStore) {}

  /** Each row with its `costShown` (null when unknown: no model call yet, or the run folder could not be read). */
  async fill<T extends TaskListEntry>(rows: readonly T[]): Promise<(T & { costShown: string | null })[]> {
    const missing = rows.filter((r) => r.cost === null && this.known.get(r.id)?.key !== keyOf(r));
    for (let i = 0; i < missing.length; i += READS_AT_ONCE) {
      await Promise.all(missing.slice(i, i + READS_AT_ONCE).map((r) => this.read(r)));
    }
    return rows.map((r) => ({
      ...r,
      costShown: r.cost !== null ? dollars(r.cost) : (this.known.get(r.id)?.cost ?? null),
    }));
  }

  private async read(row: TaskListEntry): Promise<void> {
    const totals = await runUsage(this.store(), row.id);
    if (!totals) return; // not written yet, or the store is unreachable: asked again next time
    const cost = costText(totals);
    this.known.delete(row.id);
    this.known.set(row.id, { key: keyOf(row), cost });
    if (this.known.size > REMEMBERED) this.known.delete(this.known.keys().next().value!);
  }
}

/** A run's usage totals from its run folder (events and verification), or null when it cannot be read. */
export async function runUsage(store: RunStore, id: string): Promise<UsageTotals | null> {
  try {
    return usageTotals(await loadEvents(store, id), await loadVerification(store, id));
  } catch {
    return null;
  }
}

const keyOf = (r: TaskListEntry) => `${r.status}:${r.step ?? ''}`;
