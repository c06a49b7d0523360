// Reading the JSON object of a tool call the way a real model writes it: strict JSON first, then a relaxed reading
// that accepts what Python's ast.literal_eval would (single quotes, True/False/None, tuples) plus the usual slips of
// language models (trailing commas, // # and /* */ comments, unquoted keys), and finally an object cut short at the
// end of the output, closed for it. Pure string work; no knowledge of actions.

/** How an object was read: `json` as written, `relaxed` after rewriting, `closed` after closing it at the end. */
export type JsonReading = 'json' | 'relaxed' | 'closed';

export interface DecodedObject {
  value: unknown;
  reading: JsonReading;
  /** The text of the object that was decoded (after the opening brace was found). */
  text: string;
}

interface Scan {
  /** Index of the first `{`, or -1. */
  start: number;
  /** Index just past the `}` that balances it, if the text has one. */
  end?: number;
  /** Closers still owed at the end of the text, innermost last; and whether it ends inside a string. */
  owed: string[];
  inString: boolean;
}

const CLOSER: Readonly<Record<string, string>> = { '{': '}', '[': ']', '(': ')' };

/** Walks the text from its first `{`, respecting quotes of either kind, until the brackets balance. */
function scan(text: string): Scan {
  const start = text.indexOf('{');
  const owed: string[] = [];
  let quote: string | undefined;
  for (let i = Math.max(start, 0); start >= 0 && i < text.length; i++) {
    const ch = text[i] ?? '';
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (CLOSER[ch]) owed.push(CLOSER[ch]);
    else if (ch === '}' || ch === ']' || ch === ')') {
      owed.pop();
      if (owed.length === 0) return { start, end: i + 1, owed, inString: false };
    }
  }
  return { start, owed, inString: quote !== undefined };
}

/** The first balanced `{...}` of the text (quotes of either kind respected), so trailing text is ignored. */
export function firstObject(text: string): string | undefined {
  const { start, end } = scan(text);
  return end === undefined ? undefined : text.slice(start, end);
}

/**
 * An object that was opened but never closed (an output cut off, or a model that forgot the last braces), closed by
 * appending the missing closers; undefined when the text has no `{`, is balanced, or ends inside a string.
 */
export function closeOpenObject(text: string): string | undefined {
  const { start, end, owed, inString } = scan(text);
  if (start < 0 || end !== undefined || inString || owed.length === 0) return undefined;
  const body = text.slice(start).trimEnd().replace(/,\s*$/, '');
  return body + owed.reverse().join('');
}

const PYTHON_WORDS: Record<string, string> = { True: 'true', False: 'false', None: 'null' };

/** Reads a quoted string starting at `start`; returns it re-written as a JSON string and the index after it. */
function readQuoted(text: string, start: number): { json: string; end: number } {
  const quote = text[start];
  let out = '';
  for (let i = start + 1; i < text.length; i++) {
    const ch = text[i];
    if (ch === quote) return { json: `"${out}"`, end: i + 1 };
    if (ch === '\\') {
      const next = text[++i] ?? '';
      out += next === "'" ? "'" : `\\${next}`;
    } else if (ch === '"') out += '\\"';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else out += ch;
  }
  throw new SyntaxError('unterminated string');
}

/** Index just past a comment starting at `i` (`//` or `#` to the end of the line, `/* … *\/`), or `i` if none. */
function skipComment(text: string, i: number): number {
  const two = text.slice(i, i + 2);
  if (two === '/*') {
    const end = text.indexOf('*/', i + 2);
    return end < 0 ? text.length : end + 2;
  }
  if (two === '//' || text[i] === '#') {
    const end = text.indexOf('\n', i);
    return end < 0 ? text.length : end;
  }
  return i;
}

/**
 * Rewrites a Python literal or a loosely written JS object into JSON: quoted strings of either kind,
 * True/False/None, tuples, trailing commas, comments, and bare words used as keys. Anything else is copied, so
 * JSON.parse reports what is still wrong.
 */
export function pythonLiteralToJson(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i] ?? '';
    if (ch === "'" || ch === '"') {
      const str = readQuoted(text, i);
      out += str.json;
      i = str.end;
      continue;
    }
    const afterComment = skipComment(text, i);
    if (afterComment !== i) {
      i = afterComment;
      continue;
    }
    const word = /^[A-Za-z_]\w*/.exec(text.slice(i))?.[0];
    if (word) {
      const isKey = /^\s*:/.test(text.slice(i + word.length));
      out += isKey ? `"${word}"` : (PYTHON_WORDS[word] ?? word);
      i += word.length;
      continue;
    }
    if (ch === ',' && /^,(\s|\/\/[^\n]*|#[^\n]*)*[\]})]/.test(text.slice(i))) {
      i++;
      continue;
    }
    out += ch === '(' ? '[' : ch === ')' ? ']' : ch;
    i++;
  }
  return out;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error };
  }
}

function tryRelaxed(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return tryParse(pythonLiteralToJson(text));
  } catch {
    return { ok: false };
  }
}

export class LenientJsonError extends Error {
  constructor(
    message: string,
    readonly text: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Decodes the first object in `text`: strict JSON, then relaxed, then closed at the end. Throws LenientJsonError
 * with JSON.parse's message for the strict reading when nothing works.
 */
export function decodeFirstObject(text: string): DecodedObject {
  const balanced = firstObject(text);
  const candidate = balanced ?? text.trim();
  const strict = tryParse(candidate);
  if (strict.ok) return { value: strict.value, reading: 'json', text: candidate };
  const relaxed = tryRelaxed(candidate);
  if (relaxed.ok) return { value: relaxed.value, reading: 'relaxed', text: candidate };
  if (balanced === undefined) {
    const closed = closeOpenObject(text);
    if (closed !== undefined) {
      const parsed = tryParse(closed);
      if (parsed.ok) return { value: parsed.value, reading: 'closed', text: closed };
      const loose = tryRelaxed(closed);
      if (loose.ok) return { value: loose.value, reading: 'closed', text: closed };
    }
  }
  const detail = strict.error instanceof Error ? strict.error.message : String(strict.error);
  throw new LenientJsonError(detail, candidate);
}
