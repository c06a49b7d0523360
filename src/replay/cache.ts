// The action cache (`cua run --cache NAME`, `cua eval --cache NAME`, issue 28): decisions the model made, kept in the
// run store and reused by later runs of the same task when a step's page looks the same. A task's entries are keyed
// by what makes its decisions comparable (instruction, start URL, family, viewport, model endpoint); an entry by the
// step's page signature: the step's number, its URL without query or fragment, and a perceptual hash of its pre
// screenshot (the number keeps two look-alike pages of one task apart: a field before and after typing). One object
// per entry (`_cache/<name>/<task key>/<signature key>.json`), so tasks running side by side never write the same
// object unless they saw the same page. A cached action that no longer fits its page (its element is gone) is marked
// invalid; the model's next decision on that page replaces it. Pure.
import { createHash } from 'node:crypto';
import type { TaskInput } from '../contract/task';
import type { Event } from '../trajectory/schema';

export const CACHE_PREFIX = '_cache';

type ActionEvent = Extract<Event, { type: 'action' }>;

export interface PageSignature {
  /**
   * The step's place in its run: two pages that look alike at different points of a task (a search box before and
   * after a word was typed in it) must not share a decision, or a cached run would loop.
   */
  step: number;
  /** The URL without its query and fragment. */
  url: string;
  /** screenHash of the pre screenshot. */
  hash: string;
}

export type CacheEntry =
  | {
      signature: PageSignature;
      /** The decision as recorded (its model usage is zeroed when a run reuses it). */
      action: ActionEvent;
      element: Record<string, unknown> | null;
      from: { run_id: string; step: number };
      at: string;
    }
  | { signature: PageSignature; invalid: true; reason: string; at: string };

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** What makes a task's decisions comparable, as a key. */
export function taskKey(input: Pick<TaskInput, 'instruction' | 'startUrl' | 'profile' | 'viewport' | 'model'>): string {
  const { instruction, startUrl, profile, viewport, model } = input;
  const parts = [instruction, startUrl ?? '', profile, viewport.width, viewport.height, model.endpoint];
  return sha(JSON.stringify([...parts, model.baseUrl ?? '', model.model ?? ''])).slice(0, 24);
}

/** The URL part of a page signature: no query, no fragment. */
export function signatureUrl(url: string): string {
  return url.replace(/[?#].*$/, '');
}

/** The store key of a page's entry in cache `name` for the task with key `task`. */
export function entryKey(name: string, task: string, signature: PageSignature): string {
  const page = sha(`${signature.step}\n${signature.url}\n${signature.hash}`).slice(0, 32);
  return `${CACHE_PREFIX}/${name}/${task}/${page}.json`;
}

/** An entry read from the store, or null when it is missing, unreadable or not an entry. */
export function parseEntry(text: string | undefined): CacheEntry | null {
  if (text === undefined) return null;
  try {
    const entry = JSON.parse(text) as CacheEntry;
    return entry && typeof entry === 'object' && 'signature' in entry ? entry : null;
  } catch {
    return null;
  }
}

/** The actions a cache keeps: the model's decisions that act or answer (a question needs its person each time). */
export function cacheable(action: ActionEvent): boolean {
  const meta = (action.metadata ?? {}) as Record<string, unknown>;
  if (meta['invalid_reply'] !== undefined || meta['asked_by'] === 'runtime' || meta['replay'] !== undefined)
    return false;
  return action.action_name !== 'ask_user_question';
}
