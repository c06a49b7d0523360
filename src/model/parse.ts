// Turns a model reply ("thoughts, then <tool_call>{...}</tool_call>") into a validated action of the profile.
// Lenient where Fara's own parser is: the closing tag and the newlines around the JSON may be missing, text after
// the JSON object is ignored, and a Python-literal body (single quotes, True/False/None) is accepted as a fallback.
// Optionally, any failure becomes a `terminate` carrying the raw reply, so a batch run ends the trajectory cleanly.
import type { ModelProfile } from '../actions/profiles';
import type { AgentAction } from '../actions/schemas';
import {
  EmptyOutputError,
  InvalidActionArgumentsError,
  MissingToolCallError,
  ModelOutputError,
  ToolCallJsonError,
  UnknownActionError,
} from './errors';

export interface ParsedOutput {
  /** The reply's text before `<tool_call>`, trimmed (also stored in `action.thoughts`). */
  thoughts: string;
  action: AgentAction;
  /** The text between the tags as the model wrote it, trimmed ('' when no tool call was found). */
  toolCallText: string;
  /** Set when the reply was accepted only through a fallback. */
  recoveredBy?: 'python-literal' | 'terminate-on-parse-error';
  /** With `terminate-on-parse-error`: the error that was turned into a terminate. */
  parseError?: { name: string; message: string };
}

export interface ParseOptions {
  /** Instead of throwing, end the task with a terminate carrying the raw reply (Fara's terminate_on_parse_error). */
  terminateOnParseError?: boolean;
}

const OPEN_TAG = /<tool_call\s*>/i;
const CLOSE_TAG = /<\/tool_call\s*>/i;

interface Located {
  thoughts: string;
  /** The text between the tags (to the end when the closing tag is missing), trimmed and unfenced. */
  body: string;
  /** Everything after the opening tag: the JSON object is looked for here, so a string may contain the tag. */
  after: string;
}

function locateToolCall(text: string): Located {
  if (text.trim() === '') throw new EmptyOutputError();
  const open = OPEN_TAG.exec(text);
  if (!open) throw new MissingToolCallError();
  const after = text.slice(open.index + open[0].length);
  const close = CLOSE_TAG.exec(after);
  const body = stripCodeFence((close ? after.slice(0, close.index) : after).trim());
  return { thoughts: text.slice(0, open.index).trim(), body, after };
}

function stripCodeFence(body: string): string {
  if (!body.startsWith('```')) return body;
  return body
    .replace(/^```[a-zA-Z]*\s*/, '')
    .replace(/\s*```$/, '')
    .trim();
}

/** The first balanced `{...}` of the text (quotes of either kind respected), so trailing text is ignored. */
function firstObject(text: string): string | undefined {
  const start = text.indexOf('{');
  if (start < 0) return undefined;
  let depth = 0;
  let quote: string | undefined;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

const PYTHON_WORDS: Record<string, string> = { True: 'true', False: 'false', None: 'null' };

/** Reads a quoted string starting at `start`; returns it re-written as a JSON string and the index after it. */
function readPythonString(text: string, start: number): { json: string; end: number } {
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
    else out += ch;
  }
  throw new SyntaxError('unterminated string');
}

/**
 * Rewrites a Python literal (as `ast.literal_eval` reads it) into JSON: single-quoted strings, True/False/None,
 * tuples and trailing commas. Anything else is copied, so JSON.parse reports what is still wrong.
 */
export function pythonLiteralToJson(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i] ?? '';
    if (ch === "'" || ch === '"') {
      const str = readPythonString(text, i);
      out += str.json;
      i = str.end;
      continue;
    }
    const word = /^[A-Za-z_]\w*/.exec(text.slice(i))?.[0];
    if (word) {
      out += PYTHON_WORDS[word] ?? word;
      i += word.length;
      continue;
    }
    if (ch === ',' && /^,\s*[\]})]/.test(text.slice(i))) {
      i++;
      continue;
    }
    out += ch === '(' ? '[' : ch === ')' ? ']' : ch;
    i++;
  }
  return out;
}

interface Decoded {
  value: unknown;
  viaPythonLiteral: boolean;
}

/** Decodes the tool call body as JSON, falling back to a Python literal. */
function decodeToolCallBody({ body, after }: Located): Decoded {
  const candidate = firstObject(after) ?? body;
  try {
    return { value: JSON.parse(candidate) as unknown, viaPythonLiteral: false };
  } catch (jsonError) {
    try {
      return { value: JSON.parse(pythonLiteralToJson(candidate)) as unknown, viaPythonLiteral: true };
    } catch {
      const detail = jsonError instanceof Error ? jsonError.message : String(jsonError);
      throw new ToolCallJsonError(body, `not valid JSON (${detail})`, { cause: jsonError });
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `arguments` object of a decoded tool call; a JSON-encoded string of arguments is accepted too. */
function argumentsOf(call: unknown, body: string): Record<string, unknown> {
  if (!isRecord(call)) throw new ToolCallJsonError(body, 'the tool call is not an object');
  let args = call.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args) as unknown;
    } catch (cause) {
      throw new ToolCallJsonError(body, 'the "arguments" string is not JSON', { cause });
    }
  }
  if (!isRecord(args)) throw new ToolCallJsonError(body, 'the tool call has no "arguments" object');
  return args;
}

/** The validated action with its keys in the order the model wrote them, so re-rendering a past turn is faithful. */
function inInputOrder(args: Record<string, unknown>, action: AgentAction): AgentAction {
  const slots: Record<string, unknown> = Object.fromEntries(Object.keys(args).map((key) => [key, undefined]));
  return Object.assign(slots, action);
}

function validate(profile: ModelProfile, args: Record<string, unknown>, thoughts: string, body: string): AgentAction {
  const name = args.action;
  if (typeof name !== 'string') throw new ToolCallJsonError(body, 'the arguments have no string "action"');
  if (!profile.allowedActions.includes(name)) throw new UnknownActionError(name, profile.allowedActions);
  const result = profile.actionSchema.safeParse({ ...args, thoughts });
  if (result.success) return inInputOrder(args, result.data);
  // An unexpected key says most about what the model got wrong, so it is named before a missing one.
  const issues = result.error.issues;
  const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0];
  const field = issue?.code === 'unrecognized_keys' ? (issue.keys[0] ?? '') : String(issue?.path[0] ?? '(arguments)');
  throw new InvalidActionArgumentsError(name, field, issue?.message ?? result.error.message, {
    cause: result.error,
  });
}

function parseStrict(text: string, profile: ModelProfile): ParsedOutput {
  const located = locateToolCall(text);
  const { thoughts: before, body } = located;
  const decoded = decodeToolCallBody(located);
  const args = argumentsOf(decoded.value, body);
  const thoughts = before === '' && typeof args.thoughts === 'string' ? args.thoughts : before;
  const action = validate(profile, args, thoughts, body);
  const parsed: ParsedOutput = { thoughts, action, toolCallText: body };
  if (decoded.viaPythonLiteral) parsed.recoveredBy = 'python-literal';
  return parsed;
}

/** The terminate a failed reply turns into: Fara-1.5 answers with the raw text, Fara-7B reports failure. */
function terminateWithRawText(profile: ModelProfile, raw: string): AgentAction {
  return profile.name === 'fara-7b'
    ? { action: 'terminate', status: 'failure', thoughts: raw }
    : { action: 'terminate', answer: raw, thoughts: raw };
}

function rawToolCallText(text: string): string {
  try {
    return locateToolCall(text).body;
  } catch {
    return '';
  }
}

/**
 * Parses a model reply into thoughts and one validated action of `profile`.
 * Throws a ModelOutputError subclass unless `terminateOnParseError` is set.
 */
export function parseModelOutput(text: string, profile: ModelProfile, opts: ParseOptions = {}): ParsedOutput {
  try {
    return parseStrict(text, profile);
  } catch (error) {
    if (!opts.terminateOnParseError || !(error instanceof ModelOutputError)) throw error;
    const raw = text.trim();
    return {
      thoughts: raw,
      action: terminateWithRawText(profile, raw),
      toolCallText: rawToolCallText(text),
      recoveredBy: 'terminate-on-parse-error',
      parseError: { name: error.name, message: error.message },
    };
  }
}
