// The desktop agent's tool registry: one table row per tool with the JSON schema the action model is shown and a
// zod schema the call is checked against. checkCall turns a call as a model wrote it (any casing, common other names
// for the tool and its arguments, numbers as strings) into a DesktopCall; what cannot be read becomes an `error` the
// loop hands back to the model as an observation instead of failing the run.
import { z } from 'zod';
import { toPoint } from '../../actions/normalize';
import type { ChatCompletionTool } from '../../model/client';

export const DESKTOP_TOOL_NAMES = [
  'stop',
  'run_command',
  'run_background_command',
  'send_key',
  'type_text',
  'click',
  'double_click',
  'right_click',
  'drag',
  'ask_user',
] as const;
export type DesktopToolName = (typeof DESKTOP_TOOL_NAMES)[number];

/** run_command waits this long (seconds) when the model gives no timeout. */
export const DEFAULT_COMMAND_TIMEOUT_S = 5;
/** The longest timeout (seconds) a model may ask run_command for. */
export const MAX_COMMAND_TIMEOUT_S = 120;

/** What the model reads back for a call to a tool that does not exist: the seed agent's own sentence. */
export const NOT_IMPLEMENTED = 'Function not implemented.';

/** The prefix of a failed call's observation, the seed agent's own words. */
export const CALL_ERROR_PREFIX = 'Error executing function: ';

/**
 * What the model reads back for a call: its output; for an unknown tool {@link NOT_IMPLEMENTED}; for an error
 * `Error executing function: …`, then any output the call made before it failed.
 */
export function callObservation(output: string, error: string): string {
  if (error.trim() === '') return output;
  if (error === NOT_IMPLEMENTED) return NOT_IMPLEMENTED;
  return output.trim() === '' ? `${CALL_ERROR_PREFIX}${error}` : `${CALL_ERROR_PREFIX}${error}\n${output}`;
}

/** A tool call after reading: the canonical name, the checked (or, with an error, the written) arguments. */
export type DesktopCall = { name: string; arguments: Record<string, unknown>; known: boolean; error?: string };

type JsonSchema = Record<string, unknown>;

export interface DesktopTool {
  name: DesktopToolName;
  description: string;
  /** A short signature for prompts and error texts, e.g. `run_command(command, timeout?)`. */
  usage: string;
  /** JSON schema of the arguments, as the action model sees it. */
  parameters: JsonSchema;
  /** The check applied to the (normalised) arguments. */
  args: z.ZodType<Record<string, unknown>>;
}

// ---- the table -------------------------------------------------------------------------------

const pixel = z.number().finite().min(0).transform(Math.round);
const text = z.string().trim().min(1);

const target = z.object({ query: text.optional(), x: pixel.optional(), y: pixel.optional() }).superRefine((a, ctx) => {
  const hasPoint = a.x !== undefined || a.y !== undefined;
  let message: string | undefined;
  if (a.query !== undefined && hasPoint) message = 'give "query" or "x" and "y", not both';
  else if (hasPoint && (a.x === undefined || a.y === undefined)) message = '"x" and "y" go together';
  else if (a.query === undefined && !hasPoint) {
    message = 'give "query" (what to click, in words) or both "x" and "y" (screen pixels)';
  }
  if (message) ctx.addIssue({ code: 'custom', message });
});

const targetParameters = (verb: string): JsonSchema => ({
  type: 'object',
  properties: {
    query: {
      type: 'string',
      description: `What to ${verb}, described in words (e.g. "the Save button in the dialog"); found on the screen for you.`,
    },
    x: { type: 'number', description: 'Horizontal screen pixel, only when the exact position is known.' },
    y: { type: 'number', description: 'Vertical screen pixel, only when the exact position is known.' },
  },
});

const object = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
  type: 'object',
  properties,
  required,
});

export const DESKTOP_TOOLS: readonly DesktopTool[] = [
  {
    name: 'stop',
    description: 'End the task. Put the final answer or a short report of what was done in "answer".',
    usage: 'stop(answer?)',
    parameters: object({ answer: { type: 'string', description: 'The final answer for the user.' } }, []),
    args: z.object({ answer: z.string().optional() }),
  },
  {
    name: 'run_command',
    description:
      `Run a shell command and return its output. It is stopped after ${DEFAULT_COMMAND_TIMEOUT_S} seconds unless ` +
      '"timeout" says otherwise; start long-running or graphical programs with run_background_command instead.',
    usage: 'run_command(command, timeout?)',
    parameters: object(
      {
        command: { type: 'string', description: 'The shell command line.' },
        timeout: {
          type: 'number',
          description: `Seconds to wait (default ${DEFAULT_COMMAND_TIMEOUT_S}, at most ${MAX_COMMAND_TIMEOUT_S}).`,
        },
      },
      ['command'],
    ),
    args: z.object({ command: text, timeout: z.number().positive().max(MAX_COMMAND_TIMEOUT_S).optional() }),
  },
  {
    name: 'run_background_command',
    description:
      'Start a shell command in the background without waiting for it (servers, long jobs, graphical programs). ' +
      'Its output goes to a log file, named in the result, that can be read later with run_command.',
    usage: 'run_background_command(command)',
    parameters: object({ command: { type: 'string', description: 'The shell command line.' } }, ['command']),
    args: z.object({ command: text }),
  },
  {
    name: 'send_key',
    description: 'Press a key or a key combination, e.g. "Return", "Escape", "ctrl+s", "alt+F4".',
    usage: 'send_key(key)',
    parameters: object({ key: { type: 'string', description: 'The key or combination, parts joined by "+".' } }, [
      'key',
    ]),
    args: z.object({ key: text }),
  },
  {
    name: 'type_text',
    description: 'Type text into whatever has the keyboard focus (click the field first if needed).',
    usage: 'type_text(text)',
    parameters: object({ text: { type: 'string', description: 'The text to type.' } }, ['text']),
    args: z.object({ text: z.string().min(1) }),
  },
  {
    name: 'click',
    description: 'Left-click an element, described in "query" (preferred) or given as "x" and "y".',
    usage: 'click(query) or click(x, y)',
    parameters: targetParameters('click'),
    args: target,
  },
  {
    name: 'double_click',
    description: 'Double-click an element, described in "query" (preferred) or given as "x" and "y".',
    usage: 'double_click(query) or double_click(x, y)',
    parameters: targetParameters('double-click'),
    args: target,
  },
  {
    name: 'right_click',
    description: 'Right-click an element (opens its context menu), described in "query" or given as "x" and "y".',
    usage: 'right_click(query) or right_click(x, y)',
    parameters: targetParameters('right-click'),
    args: target,
  },
  {
    name: 'drag',
    description: 'Press the left button at (from_x, from_y), move to (to_x, to_y) and release it.',
    usage: 'drag(from_x, from_y, to_x, to_y)',
    parameters: object(
      {
        from_x: { type: 'number', description: 'Start, horizontal pixel.' },
        from_y: { type: 'number', description: 'Start, vertical pixel.' },
        to_x: { type: 'number', description: 'End, horizontal pixel.' },
        to_y: { type: 'number', description: 'End, vertical pixel.' },
      },
      ['from_x', 'from_y', 'to_x', 'to_y'],
    ),
    args: z.object({ from_x: pixel, from_y: pixel, to_x: pixel, to_y: pixel }),
  },
  {
    name: 'ask_user',
    description:
      'Ask the user a question and wait for the reply. Only for information that only the user has ' +
      '(a password, a personal choice, a missing detail).',
    usage: 'ask_user(question)',
    parameters: object({ question: { type: 'string', description: 'The question for the user.' } }, ['question']),
    args: z.object({ question: text }),
  },
];

const BY_NAME: ReadonlyMap<string, DesktopTool> = new Map(DESKTOP_TOOLS.map((t) => [t.name, t]));

/** The registry row of a tool, by canonical name. */
export function desktopTool(name: string): DesktopTool | undefined {
  return BY_NAME.get(name);
}

/** The tools in the OpenAI `tools` format, for native function calling. */
export function openAiTools(): ChatCompletionTool[] {
  return DESKTOP_TOOLS.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

// ---- names -----------------------------------------------------------------------------------

/** Other names models give the tools (after case and separators are normalised). */
const NAME_ALIASES: Readonly<Record<string, DesktopToolName>> = {
  finish: 'stop',
  done: 'stop',
  terminate: 'stop',
  end: 'stop',
  final_answer: 'stop',
  answer: 'stop',
  run: 'run_command',
  shell: 'run_command',
  bash: 'run_command',
  exec: 'run_command',
  execute: 'run_command',
  execute_command: 'run_command',
  run_shell_command: 'run_command',
  run_background: 'run_background_command',
  run_in_background: 'run_background_command',
  background_command: 'run_background_command',
  key: 'send_key',
  keys: 'send_key',
  press: 'send_key',
  press_key: 'send_key',
  keypress: 'send_key',
  hotkey: 'send_key',
  send_keys: 'send_key',
  type: 'type_text',
  write: 'type_text',
  typetext: 'type_text',
  input_text: 'type_text',
  left_click: 'click',
  leftclick: 'click',
  tap: 'click',
  doubleclick: 'double_click',
  dblclick: 'double_click',
  rightclick: 'right_click',
  drag_and_drop: 'drag',
  left_click_drag: 'drag',
  ask: 'ask_user',
  ask_user_question: 'ask_user',
  ask_question: 'ask_user',
};

/** A tool name as written, made canonical: "doubleClick" → "double_click", "Run Command" → "run_command". */
export function canonicalToolName(written: string): string {
  const snake = written
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[\s.-]+/g, '_');
  return NAME_ALIASES[snake] ?? snake;
}

/** Wrappers some models put every action in: `computer({"action": "click", …})`. */
const WRAPPERS = new Set(['computer', 'computer_use']);

// ---- arguments -------------------------------------------------------------------------------

type ArgumentRules = {
  /** Other names of an argument, tried only when the argument itself is absent. */
  aliases?: Record<string, readonly string[]>;
  /** Arguments holding a point [x, y], spread into two arguments. */
  points?: Record<string, readonly [string, string]>;
};

const TARGET_RULES: ArgumentRules = {
  aliases: { query: ['description', 'target', 'element', 'element_description', 'label', 'instruction'] },
  points: {
    coordinate: ['x', 'y'],
    coordinates: ['x', 'y'],
    point: ['x', 'y'],
    position: ['x', 'y'],
    xy: ['x', 'y'],
  },
};

const COMMAND_ALIASES = ['cmd', 'shell_command', 'command_line', 'script'];

const RULES: Readonly<Record<DesktopToolName, ArgumentRules>> = {
  stop: { aliases: { answer: ['final_answer', 'result', 'response', 'text', 'message', 'summary'] } },
  run_command: {
    aliases: { command: COMMAND_ALIASES, timeout: ['timeout_seconds', 'timeout_s', 'seconds', 'timeout_sec'] },
  },
  run_background_command: { aliases: { command: COMMAND_ALIASES } },
  send_key: { aliases: { key: ['keys', 'keys_to_press', 'key_combination', 'hotkey', 'combo', 'combination'] } },
  type_text: { aliases: { text: ['content', 'value', 'string', 'input', 'text_value'] } },
  click: TARGET_RULES,
  double_click: TARGET_RULES,
  right_click: TARGET_RULES,
  drag: {
    aliases: { from_x: ['x1', 'start_x'], from_y: ['y1', 'start_y'], to_x: ['x2', 'end_x'], to_y: ['y2', 'end_y'] },
    points: {
      from: ['from_x', 'from_y'],
      start: ['from_x', 'from_y'],
      start_coordinate: ['from_x', 'from_y'],
      to: ['to_x', 'to_y'],
      end: ['to_x', 'to_y'],
      end_coordinate: ['to_x', 'to_y'],
    },
  },
  ask_user: { aliases: { question: ['prompt', 'message', 'text', 'query'] } },
};

const NUMBER = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numericFields(tool: DesktopTool): Set<string> {
  const properties = isRecord(tool.parameters.properties) ? tool.parameters.properties : {};
  return new Set(Object.entries(properties).flatMap(([k, v]) => (isRecord(v) && v.type === 'number' ? [k] : [])));
}

/** The first argument a bare string or number stands for (`run_command("ls")`). */
function primaryField(tool: DesktopTool): string | undefined {
  const required = tool.parameters.required;
  if (Array.isArray(required) && typeof required[0] === 'string') return required[0];
  const properties = isRecord(tool.parameters.properties) ? Object.keys(tool.parameters.properties) : [];
  return properties[0];
}

/** The arguments as written, with aliases, points, key lists and numbers as strings made canonical. */
function normalizeArguments(tool: DesktopTool, written: Record<string, unknown>): Record<string, unknown> {
  const rules = RULES[tool.name];
  const args: Record<string, unknown> = { ...written };
  for (const [name, others] of Object.entries(rules.aliases ?? {})) {
    const alias = others.find((a) => args[a] !== undefined);
    if (args[name] === undefined && alias !== undefined) args[name] = args[alias];
    if (alias !== undefined) for (const a of others) delete args[a];
  }
  for (const [name, [xName, yName]] of Object.entries(rules.points ?? {})) {
    const point = args[name] === undefined ? undefined : toPoint(args[name]);
    if (point && args[xName] === undefined && args[yName] === undefined) [args[xName], args[yName]] = point;
    if (point) delete args[name];
  }
  if (tool.name === 'send_key' && Array.isArray(args.key) && args.key.every((k) => typeof k === 'string')) {
    args.key = args.key.join('+');
  }
  const numeric = numericFields(tool);
  for (const [name, value] of Object.entries(args)) {
    if (numeric.has(name) && typeof value === 'string' && NUMBER.test(value)) args[name] = Number(value);
    if (!numeric.has(name) && (typeof value === 'number' || typeof value === 'boolean')) args[name] = String(value);
  }
  return args;
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function show(value: unknown): string {
  return clip(JSON.stringify(value) ?? String(value), 60);
}

/** One line saying what is wrong with the arguments and what was expected. */
function argumentError(tool: DesktopTool, args: Record<string, unknown>, error: z.ZodError): string {
  const issue = error.issues[0];
  const field = issue?.path[0];
  let problem: string;
  if (issue?.code === 'custom' || field === undefined) problem = issue?.message ?? 'not valid';
  else {
    const value = args[String(field)];
    const reason = (issue?.message ?? 'not valid').replace(/^Invalid input: /, '');
    problem = value === undefined ? `"${String(field)}" is missing` : `"${String(field)}" ${show(value)}: ${reason}`;
  }
  return `Bad arguments for ${tool.name}: ${problem}. Expected ${tool.usage}.`;
}

/** The arguments object of a call: a record as is, nothing as {}, a bare value as the tool's first argument. */
function argumentsObject(tool: DesktopTool, raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return {};
  if (isRecord(raw)) return raw;
  const primary = primaryField(tool);
  if ((typeof raw === 'string' || typeof raw === 'number') && primary !== undefined) return { [primary]: raw };
  return undefined;
}

/**
 * Reads one call as a model wrote it: name made canonical (aliases, `computer`-style wrappers), arguments
 * normalised and checked. Never throws; problems are in `error` (`known: false` for a tool that does not exist).
 */
export function checkCall(name: string, rawArgs: unknown): DesktopCall {
  let canonical = canonicalToolName(name);
  let raw = rawArgs;
  if (WRAPPERS.has(canonical) && isRecord(raw) && typeof raw.action === 'string') {
    const { action, ...rest } = raw;
    canonical = canonicalToolName(action);
    raw = rest;
  }
  const tool = desktopTool(canonical);
  if (!tool) {
    return {
      name: canonical,
      arguments: isRecord(raw) ? raw : {},
      known: false,
      error: NOT_IMPLEMENTED,
    };
  }
  const written = argumentsObject(tool, raw);
  if (written === undefined) {
    return {
      name: tool.name,
      arguments: {},
      known: true,
      error: `Bad arguments for ${tool.name}: expected a JSON object, got ${show(raw)}. Expected ${tool.usage}.`,
    };
  }
  const args = normalizeArguments(tool, written);
  const result = tool.args.safeParse(args);
  if (!result.success)
    return { name: tool.name, arguments: args, known: true, error: argumentError(tool, args, result.error) };
  const checked = Object.fromEntries(Object.entries(result.data).filter(([, v]) => v !== undefined));
  return { name: tool.name, arguments: checked, known: true };
}

// ---- one-line summaries ----------------------------------------------------------------------

function point(x: unknown, y: unknown): string {
  return `(${String(x)}, ${String(y)})`;
}

/** A call in one line for UIs and logs, e.g. `click "the OK button"`, `run_command: ls -la`. */
export function summarizeCall(call: DesktopCall): string {
  const a = call.arguments;
  const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : (JSON.stringify(v) ?? ''));
  switch (call.name) {
    case 'stop':
      return a.answer === undefined ? 'stop' : `stop: ${clip(str(a.answer), 80)}`;
    case 'run_command':
    case 'run_background_command': {
      const timeout = call.name === 'run_command' && a.timeout !== undefined ? ` (timeout ${str(a.timeout)} s)` : '';
      return `${call.name}: ${clip(str(a.command), 80)}${timeout}`;
    }
    case 'send_key':
      return `send_key ${clip(str(a.key), 40)}`;
    case 'type_text':
      return `type_text ${clip(JSON.stringify(str(a.text)), 60)}`;
    case 'click':
    case 'double_click':
    case 'right_click':
      return a.query !== undefined
        ? `${call.name} ${clip(JSON.stringify(str(a.query)), 70)}`
        : `${call.name} ${point(a.x, a.y)}`;
    case 'drag':
      return `drag ${point(a.from_x, a.from_y)} → ${point(a.to_x, a.to_y)}`;
    case 'ask_user':
      return `ask_user: ${clip(str(a.question), 80)}`;
    default:
      return clip(`${call.name || '(unreadable call)'} ${JSON.stringify(a)}`, 80);
  }
}
