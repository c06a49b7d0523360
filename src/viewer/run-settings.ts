// What a run was set up with, as the view reads it from task.json and the run state: the model profile, the
// viewport, and the run a replay run replays (with its steps' tally).
import { z } from 'zod';
import { isFamilyName } from '../families/registry';
import type { Viewport } from '../coords/viewport';
import { tallyOf } from '../replay/summary';
import type { ViewInput, ViewReplay } from './view';

export const DEFAULT_VIEWPORT: Viewport = { width: 1440, height: 900 };

const ViewportArg = z.looseObject({ width: z.number().positive(), height: z.number().positive() });

export function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The run's model family (`profile`, its wire name): task.json metadata, else the run state's input, else Fara-1.5
 * (the default); a family no process here registered reads as Fara-1.5.
 */
export function profileOf(run: Pick<ViewInput, 'task' | 'runState'>): string {
  const candidates = [run.task.metadata['profile'], recordOf(run.runState['input'])['profile']];
  const found = candidates.find((c): c is string => typeof c === 'string' && isFamilyName(c));
  return found ?? 'fara-1.5';
}

/** The run's viewport: task.json's environment_config, else the run state's input, else `fallback`. */
export function viewportOf(run: Pick<ViewInput, 'task' | 'runState'>, fallback: Viewport = DEFAULT_VIEWPORT): Viewport {
  for (const candidate of [run.task.environment_config['viewport'], recordOf(run.runState['input'])['viewport']]) {
    const parsed = ViewportArg.safeParse(candidate);
    if (parsed.success) return { width: parsed.data.width, height: parsed.data.height };
  }
  return fallback;
}

/** The run a replay run replays (task.json `metadata.replay_of.run_id`), or null for any other run. */
export function replayOfRun(run: Pick<ViewInput, 'task'>): string | null {
  const id = recordOf(run.task.metadata['replay_of'])['run_id'];
  return typeof id === 'string' && id !== '' ? id : null;
}

/** The header of a replay run: the run it replays and its steps' tally (as `cua replay` counts them); null for others. */
export function replayView(run: Pick<ViewInput, 'task' | 'events'>): ViewReplay | null {
  const of = replayOfRun(run);
  const cache = recordOf(run.task.metadata['cache'])['name'];
  if (of === null && typeof cache !== 'string') return null;
  const { replayed, healed, decided } = tallyOf(run.events);
  return { of: of ?? '', ...(of === null ? { cache: String(cache) } : {}), replayed, healed, decided };
}
