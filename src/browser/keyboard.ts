// Pressing a key chord on the page: keys held in order, always released in reverse, unknown keys made clear.
import type { Page } from 'playwright';
import { UnknownKeyError } from './errors';

function unknownKeyIn(error: unknown): boolean {
  return error instanceof Error && /Unknown key/i.test(error.message);
}

/** Holds each key in turn, then releases every held key in reverse order — even when one of them fails. */
export async function pressChord(page: Page, keys: readonly string[]): Promise<void> {
  const held: string[] = [];
  try {
    for (const key of keys) {
      try {
        await page.keyboard.down(key);
      } catch (error) {
        if (unknownKeyIn(error)) throw new UnknownKeyError(key, { cause: error });
        throw error;
      }
      held.push(key);
    }
  } finally {
    for (const key of held.reverse()) await page.keyboard.up(key).catch(() => undefined);
  }
}
