// A worker's slots in the browser and desktop sections: `slots`, or `maxSessions` (its wire name, kept so existing
// config files and embedding applications keep working), read into the one field `slots`.
import type { z } from 'zod';

/** A section as written: either key, or both when they agree. */
type SlotKeys = { slots?: number | undefined; /** wire name */ maxSessions?: number | undefined };

/** Refuses a section that gives both keys with different numbers. */
export function checkSlotKeys(section: SlotKeys, ctx: z.RefinementCtx): void {
  const { slots, maxSessions: oldName } = section;
  if (slots === undefined || oldName === undefined || slots === oldName) return;
  ctx.addIssue({
    code: 'custom',
    path: ['slots'],
    message: `is ${slots} but maxSessions (its other name) is ${oldName}; give one of them`,
  });
}

/** The section with its slots in `slots` alone (`fallback` when neither key is given). */
export function oneSlotsField<T extends SlotKeys, F extends number | undefined>(
  section: T,
  fallback: F,
): Omit<T, 'slots' | 'maxSessions'> & { slots: number | F } {
  const { slots, maxSessions: oldName, ...rest } = section;
  return { ...rest, slots: slots ?? oldName ?? fallback };
}
