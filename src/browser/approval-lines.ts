// The approval lines of a run's journal (request-journal.ts) as the reply and the question read them: the holds a
// question is about, whether one is decided, and a hold as the question shows it. Pure.
import type { HeldForApproval } from '../agent/approvals';
import type { JournalHeld, JournalLine } from './request-journal';

/** The holds with these ids, as the journal has them (a decision is written for each). */
export function holdsNamed(lines: readonly JournalLine[], ids: readonly string[]): JournalHeld[] {
  const wanted = new Set(ids);
  return lines.filter((l): l is JournalHeld => l.kind === 'held' && !!l.approval && wanted.has(l.id));
}

/** Whether a hold has a decision already (a retried reply writes none twice). */
export function isDecided(lines: readonly JournalLine[], id: string): boolean {
  return lines.some((l) => (l.kind === 'approved' || l.kind === 'denied') && l.id === id);
}

/** A hold as the question shows it. */
export function heldForApproval(hold: JournalHeld): HeldForApproval {
  const a = hold.approval;
  return { method: a?.method ?? '', url: a?.url ?? '', label: a?.label ?? '', fields: a?.body_preview ?? '' };
}
