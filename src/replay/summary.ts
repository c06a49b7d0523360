// What a replay saved (`cua replay` prints it): its steps as replayed, healed or decided by the model, the model
// calls it made against the recording's, and the time each took (first event to last). Pure: the events come in.
import type { Event } from '../trajectory/schema';

export interface ReplayTally {
  replayed: number;
  healed: number;
  decided: number;
  /** Model calls: decisions the model made (not replayed) and the calls inside tools (read_page's question). */
  modelCalls: number;
  /** Model calls saved: the reused decisions, and the tool calls whose recorded answer was reused. */
  savedCalls: number;
  /** Milliseconds from the first event to the last. */
  durationMs: number;
}

export type ReplayHow = 'replayed' | 'healed';

/** How an action event was replayed, or null when the model decided it. */
export function replayHowOf(e: Event): ReplayHow | null {
  const how = ((e.metadata ?? {}) as { replay?: { how?: unknown } }).replay?.how;
  return how === 'replayed' || how === 'healed' ? how : null;
}

/** A run's tally (a replay's, or its recording's: there every step counts as decided). */
export function tallyOf(events: readonly Event[]): ReplayTally {
  const t: ReplayTally = { replayed: 0, healed: 0, decided: 0, modelCalls: 0, savedCalls: 0, durationMs: 0 };
  for (const e of events) {
    if (e.type !== 'action') continue;
    const meta = (e.metadata ?? {}) as Record<string, unknown>;
    if (meta['asked_by'] === 'runtime') continue;
    const how = replayHowOf(e);
    if (how) {
      t[how] += 1;
      t.savedCalls += 1;
    } else {
      t.decided += 1;
      t.modelCalls += 1;
    }
    // A sub-call whose recorded answer was reused (a replayed read_page on the same page text) made no call.
    const subCalls = Array.isArray(e.tool_sub_calls) ? e.tool_sub_calls : [];
    const reused = subCalls.filter((c) => (c as { reused_from?: unknown } | null)?.reused_from).length;
    t.modelCalls += subCalls.length - reused;
    t.savedCalls += reused;
  }
  const times = events.map((e) => Date.parse(e.timestamp)).filter((n) => Number.isFinite(n));
  if (times.length > 1) t.durationMs = Math.max(...times) - Math.min(...times);
  return t;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The lines `cua replay` ends with: how its steps went, and what it saved against the recording. */
export function replayLines(replay: ReplayTally, recording: ReplayTally): string[] {
  const saved = recording.modelCalls - replay.modelCalls;
  return [
    `steps: ${replay.replayed} replayed, ${replay.healed} healed, ${replay.decided} decided by the model`,
    `model calls: ${replay.modelCalls} (the recording made ${recording.modelCalls}; ${saved >= 0 ? `${saved} saved` : `${-saved} more`})`,
    `time: ${seconds(replay.durationMs)} (the recording took ${seconds(recording.durationMs)})`,
  ];
}
