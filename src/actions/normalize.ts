// Tolerant reading of one action's arguments, before strict validation. Real models write the right thing in
// slightly wrong shapes; where the meaning is clear we accept it and say what we did:
// - arguments the action does not use are dropped (and reported), as Fara's own dispatch ignores them;
// - aliases the models use for an argument (`text_value` for `text`, `duration` for `time`, `x`/`y` for a point);
// - numbers written as strings, booleans as strings, a point as "[500, 300]", "(500, 300)" or {"x":…, "y":…},
//   `keys` as one chord string ("Control+a"), free text given as a number.
// Anything still wrong is left for the zod schema to report.
import { z } from 'zod';
import type { ActionObjectSchema } from './schemas';

export interface NormalizedArguments {
  /** The arguments to validate: `action` first, then the action's own arguments. */
  args: Record<string, unknown>;
  /** Argument names the action does not use (left out of `args`). */
  ignored: string[];
  /** What was rewritten, e.g. `pixels: "-1445" → -1445`, `text_value → text`. */
  coerced: string[];
}

/** Other names models give an argument, tried only when the argument itself is absent. */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  text: ['text_value', 'value', 'input_text', 'content'],
  time: ['duration', 'seconds', 'secs', 'wait_time'],
  coordinate: ['coordinates', 'coords', 'position', 'point', 'xy', 'location'],
  keys: ['key', 'key_combination', 'hotkey'],
  url: ['link', 'address', 'website'],
  query: ['search_query', 'search', 'q'],
  question: ['query_text', 'prompt'],
  answer: ['final_answer', 'result', 'response'],
  pixels: ['amount', 'scroll_amount', 'delta'],
  fact: ['memory', 'note'],
};

type FieldKind = 'point' | 'keys' | 'number' | 'boolean' | 'string' | 'enum' | 'other';

type FieldInfo = { kind: FieldKind; values?: string[] };

/** The schemas never change, so each field's JSON-schema reading is done once (decide reads every reply with it). */
const kinds = new WeakMap<z.ZodType, FieldInfo>();

function kindOf(name: string, field: z.ZodType): FieldInfo {
  if (name === 'coordinate') return { kind: 'point' };
  if (name === 'keys') return { kind: 'keys' };
  let info = kinds.get(field);
  if (!info) kinds.set(field, (info = readKind(field)));
  return info;
}

function readKind(field: z.ZodType): FieldInfo {
  const json = z.toJSONSchema(field) as { type?: unknown; enum?: unknown };
  if (Array.isArray(json.enum)) return { kind: 'enum', values: json.enum.map(String) };
  if (json.type === 'number' || json.type === 'integer') return { kind: 'number' };
  if (json.type === 'boolean') return { kind: 'boolean' };
  if (json.type === 'string') return { kind: 'string' };
  return { kind: 'other' };
}

const NUMBER = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && NUMBER.test(value)) return Number(value);
  return undefined;
}

function toBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && (value === 0 || value === 1)) return value === 1;
  if (typeof value !== 'string') return undefined;
  const word = value.trim().toLowerCase();
  if (['true', 'yes', '1'].includes(word)) return true;
  if (['false', 'no', '0'].includes(word)) return false;
  return undefined;
}

/** A point as [x, y] from the shapes models write; undefined when it is not clearly a point. */
export function toPoint(value: unknown): [number, number] | undefined {
  if (Array.isArray(value)) {
    if (value.length === 1 && Array.isArray(value[0])) return toPoint(value[0]);
    if (value.length !== 2) return undefined;
    const [x, y] = value.map(toNumber);
    return x !== undefined && y !== undefined ? [x, y] : undefined;
  }
  if (typeof value === 'string') {
    const parts = value
      .trim()
      .replace(/^[[(]\s*|\s*[\])]$/g, '')
      .split(/\s*,\s*|\s+/);
    return parts.length === 2 ? toPoint(parts) : undefined;
  }
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return toPoint([o.x ?? o.X, o.y ?? o.Y]);
  }
  return undefined;
}

/** `keys` as a list of key names: a chord string "Control+a" is split at `+` (a lone "+" is the plus key). */
export function toKeys(value: unknown): string[] | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (text === '+' || !text.includes('+')) return [text];
  const parts = text.split('+').map((k) => k.trim());
  // "Control++" means Control and the plus key.
  if (parts.at(-1) === '' && parts.at(-2) === '') parts.splice(-2, 2, '+');
  return parts.every((k) => k !== '') ? parts : undefined;
}

function coerce(kind: FieldKind, value: unknown, values?: string[]): unknown {
  switch (kind) {
    case 'point':
      return Array.isArray(value) && value.every((v) => typeof v === 'number') ? value : (toPoint(value) ?? value);
    case 'keys':
      return toKeys(value) ?? value;
    case 'number':
      return toNumber(value) ?? value;
    case 'boolean':
      return toBoolean(value) ?? value;
    case 'string':
      return typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
    case 'enum': {
      const word = typeof value === 'string' ? value.trim().toLowerCase() : value;
      return typeof word === 'string' && values?.includes(word) ? word : value;
    }
    default:
      return value;
  }
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** The arguments of one action, tolerant of the shapes real models write (see the module comment). */
export function normalizeArguments(schema: ActionObjectSchema, raw: Record<string, unknown>): NormalizedArguments {
  const shape = schema.shape as Record<string, z.ZodType>;
  const fields = Object.keys(shape).filter((k) => k !== 'action' && k !== 'thoughts');
  const rest: Record<string, unknown> = { ...raw };
  const args: Record<string, unknown> = { action: rest.action };
  delete rest.action;
  delete rest.thoughts;
  const coerced: string[] = [];
  const order = Object.keys(raw);
  const found: { name: string; value: unknown; at: number }[] = [];
  for (const name of fields) {
    let value = rest[name];
    let source = name;
    if (value === undefined) {
      const alias = (ALIASES[name] ?? []).find((a) => rest[a] !== undefined && !fields.includes(a));
      if (alias) [value, source] = [rest[alias], alias];
      else if (name === 'coordinate' && rest.x !== undefined && rest.y !== undefined) {
        [value, source] = [[rest.x, rest.y], 'x, y'];
        delete rest.x;
        delete rest.y;
      }
    }
    delete rest[source];
    if (value === undefined || value === null) continue;
    const field = shape[name];
    const { kind, values } = field ? kindOf(name, field) : { kind: 'other' as const, values: undefined };
    const next = coerce(kind, value, values);
    if (source !== name) coerced.push(`${source} → ${name}`);
    if (next !== value) coerced.push(`${name}: ${show(value)} → ${show(next)}`);
    found.push({ name, value: next, at: order.indexOf(source === 'x, y' ? 'x' : source) });
  }
  // In the order the model wrote them, so a past step's output re-rendered from the record reads as it was written.
  for (const f of found.sort((a, b) => a.at - b.at)) args[f.name] = f.value;
  return { args, ignored: Object.keys(rest).filter((k) => rest[k] !== undefined), coerced };
}
