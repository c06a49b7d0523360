// The note the model reads after a person took its browser over and handed it back (`cua handback <id> ["note"]`):
// that a person acted, for how long, what changed (URL and title) and their note. Pure: the workflow may word it too.

export type HandbackFacts = {
  /** How long the person had the browser. */
  durationMs: number;
  urlBefore: string;
  urlAfter: string;
  titleBefore: string;
  titleAfter: string;
  /** What the person typed with `cua handback`; empty or absent: none. */
  note?: string | null;
};

/** A page title or URL on one line, cut at `max` characters. */
function oneLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A duration as people say it: 45 s, 2 min 5 s, 1 h 3 min (under a second: less than a second). */
export function spokenDuration(ms: number): string {
  const seconds = Math.round(Math.max(0, ms) / 1000);
  if (seconds < 1) return 'less than a second';
  const h = Math.floor(seconds / 3600);
  const min = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return min > 0 ? `${h} h ${min} min` : `${h} h`;
  if (min > 0) return s > 0 ? `${min} min ${s} s` : `${min} min`;
  return `${s} s`;
}

/** `https://x.test/ ("Title")`, or the URL alone when the page has no title. */
function page(url: string, title: string): string {
  const shown = oneLine(url, 500) || 'a blank page';
  const named = oneLine(title, 200);
  return named ? `${shown} ("${named}")` : shown;
}

/** The hand-back note: "A person took over the browser for 2 min 5 s and handed it back. The page was … Their note: …" */
export function handbackNote(facts: HandbackFacts): string {
  const lead = `A person took over the browser for ${spokenDuration(facts.durationMs)} and handed it back.`;
  const before = page(facts.urlBefore, facts.titleBefore);
  const after = page(facts.urlAfter, facts.titleAfter);
  const change =
    before === after
      ? `The page is still ${after}; what they did on it may have changed it.`
      : `The page was ${before} and is now ${after}.`;
  const note = facts.note?.trim();
  const told = note ? `Their note: ${note}` : 'They left no note.';
  return `${lead} ${change} ${told} Look at the new screenshot before going on.`;
}
