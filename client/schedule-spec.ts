// When a schedule runs, checked before anything is sent to Temporal: a cron expression (5 to 7 fields, names for
// months and days, the @daily-style shorthands), an interval (`--every 6h`, `5s` for tests), an IANA time zone (as
// this process's Intl knows it), a catch-up window. Each refusal is one line naming the part that is wrong.

/** A schedule spec part that is wrong; the message is one line. */
export class ScheduleSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const SHORTHANDS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

interface Field {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** The first name's number (months count from 1, days from 0). */
  base?: number;
}
const SECOND: Field = { name: 'second', min: 0, max: 59 };
const FIELDS5: Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, base: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAYS, base: 0 },
];
const YEAR: Field = { name: 'year', min: 1970, max: 2999 };

/** A duration such as `90s`, `15m`, `6h`, `1d` (also combined: `1h30m`) in milliseconds, or ScheduleSpecError. */
export function parseDuration(text: string, what: string): number {
  const t = text.trim().toLowerCase();
  if (!/^(\d+[smhd])+$/.test(t)) {
    throw new ScheduleSpecError(`${what} '${text}' is no duration: a number and a unit, s, m, h or d (e.g. 6h, 5s)`);
  }
  let ms = 0;
  for (const [, n, unit] of t.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * (UNITS[unit ?? ''] ?? 0);
  if (ms < 1000) throw new ScheduleSpecError(`${what} must be at least 1 s`);
  return ms;
}

/** `--every`: an interval of at least a second. */
export function parseEvery(text: string): number {
  return parseDuration(text, '--every');
}

function fieldValue(raw: string, f: Field): number {
  const lower = raw.toLowerCase();
  const named = f.names?.findIndex((n) => lower === n || (lower.length > 3 && n === lower.slice(0, 3)));
  if (named !== undefined && named >= 0 && /^[a-z]+$/.test(lower)) return named + (f.base ?? 0);
  if (!/^\d+$/.test(raw))
    throw new ScheduleSpecError(`cron ${f.name}: '${raw}' is no number${f.names ? ' or name' : ''}`);
  const n = Number(raw);
  if (n < f.min || n > f.max) throw new ScheduleSpecError(`cron ${f.name}: ${n} is outside ${f.min}–${f.max}`);
  return n;
}

function checkField(text: string, f: Field): void {
  for (const item of text.split(',')) {
    const m = /^([^/]+)(?:\/(\d+))?$/.exec(item);
    if (!m) throw new ScheduleSpecError(`cron ${f.name}: '${item}' is not understood`);
    const [, range = '', step] = m;
    if (step !== undefined && Number(step) < 1) throw new ScheduleSpecError(`cron ${f.name}: a step must be ≥ 1`);
    if (range === '*' || range === '?') continue;
    const [from = '', to, more] = range.split('-');
    if (more !== undefined) throw new ScheduleSpecError(`cron ${f.name}: '${range}' is not a range`);
    const a = fieldValue(from, f);
    if (to !== undefined && fieldValue(to, f) < a) {
      throw new ScheduleSpecError(`cron ${f.name}: the range '${range}' ends before it starts`);
    }
  }
}

/**
 * Checks a cron expression as Temporal reads it: 5 fields (minute hour day-of-month month day-of-week), 6 (and year)
 * or 7 (second first), or a shorthand (@daily, …); a `# comment` at the end is allowed. ScheduleSpecError otherwise.
 */
export function checkCron(expression: string): void {
  const text = expression.replace(/#.*$/, '').trim();
  if (!text) throw new ScheduleSpecError('cron: the expression is empty');
  if (/^(CRON_)?TZ=/i.test(text)) throw new ScheduleSpecError('cron: give the time zone with --timezone, not TZ=');
  if (text.startsWith('@')) {
    if (SHORTHANDS.includes(text.toLowerCase())) return;
    throw new ScheduleSpecError(`cron: unknown shorthand '${text}' (${SHORTHANDS.join(', ')}; or use --every)`);
  }
  const parts = text.split(/\s+/);
  const fields =
    parts.length === 5
      ? FIELDS5
      : parts.length === 6
        ? [...FIELDS5, YEAR]
        : parts.length === 7
          ? [SECOND, ...FIELDS5, YEAR]
          : null;
  if (!fields) {
    throw new ScheduleSpecError(
      `cron: '${text}' has ${parts.length} field(s); expected 5 (minute hour day-of-month month day-of-week), 6 or 7`,
    );
  }
  fields.forEach((f, i) => checkField(parts[i] ?? '', f));
}

/** Checks an IANA time zone name (e.g. Europe/Lisbon) against this process's time zone data. */
export function checkTimezone(zone: string): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    throw new ScheduleSpecError(`--timezone: unknown time zone '${zone}' (an IANA name such as Europe/Lisbon or UTC)`);
  }
}
