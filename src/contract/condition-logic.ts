// A monitor's `notifyWhen`, compiled: `changed`, an expression (condition.ts), or a JSON-logic object in the subset
// var, ==, !=, <, <=, >, >=, and, or, ! — turned into the same tree the expression parser makes, so one evaluator
// serves both. Pure; validated when a schedule is created (the task contract) and compiled by the monitor workflow.
import { CONDITION_ROOTS, ConditionError, MAX_CONDITION_DEPTH, evaluate, parseExpression, truthy } from './condition';
import type { CompareOp, ConditionData, ConditionNode, ConditionRoot } from './condition';

export type NotifyWhen = string | Record<string, unknown>;
export type CompiledCondition = { kind: 'changed' } | { kind: 'condition'; node: ConditionNode };

const COMPARISONS: readonly string[] = ['==', '!=', '<', '<=', '>', '>='];
/** JSON logic's strict forms read as the plain ones: the values are JSON. */
const ALIASES: Record<string, string> = { '===': '==', '!==': '!=' };
/** A JSON-logic object is refused beyond this many characters once written as JSON. */
const MAX_LOGIC_CHARS = 4000;

/** Turns a JSON-logic object into a condition tree, or ConditionError naming the first part it cannot read. */
export function fromJsonLogic(rule: unknown, depth = 0): ConditionNode {
  if (depth > MAX_CONDITION_DEPTH) throw new ConditionError(`JSON logic nested deeper than ${MAX_CONDITION_DEPTH}`);
  if (rule === null || typeof rule === 'number' || typeof rule === 'string' || typeof rule === 'boolean') {
    if (typeof rule === 'number' && !Number.isFinite(rule))
      throw new ConditionError('JSON logic: a number is not finite');
    return { k: 'lit', v: rule };
  }
  if (Array.isArray(rule)) throw new ConditionError('JSON logic: an array is only an operator’s arguments');
  if (typeof rule !== 'object') throw new ConditionError(`JSON logic: unexpected ${typeof rule}`);
  const keys = Object.keys(rule);
  if (keys.length !== 1) throw new ConditionError('JSON logic: an operation is an object with one key');
  const name = keys[0] ?? '';
  const op = ALIASES[name] ?? name;
  const raw = (rule as Record<string, unknown>)[name];
  const args = Array.isArray(raw) ? raw : [raw];
  const sub = (r: unknown) => fromJsonLogic(r, depth + 1);
  if (op === 'var') return varPath(args[0]);
  if (op === '!') {
    if (args.length !== 1) throw new ConditionError('JSON logic: ! takes one argument');
    return { k: 'not', a: sub(args[0]) };
  }
  if (op === 'and' || op === 'or') {
    if (args.length < 1) throw new ConditionError(`JSON logic: ${op} needs an argument`);
    return args.map(sub).reduce((a, b) => ({ k: op, a, b }));
  }
  if (COMPARISONS.includes(op)) {
    if (args.length !== 2) throw new ConditionError(`JSON logic: ${name} takes two arguments`);
    return { k: 'cmp', op: op as CompareOp, a: sub(args[0]), b: sub(args[1]) };
  }
  throw new ConditionError(
    `JSON logic: unsupported operation '${name.slice(0, 40)}' (var, ==, !=, <, <=, >, >=, and, or, !)`,
  );
}

/** `{"var": "output.price"}`: a dotted path from one of the roots; digits are array indexes. */
function varPath(arg: unknown): ConditionNode {
  if (typeof arg !== 'string' || !arg) throw new ConditionError('JSON logic: var takes a path such as "output.price"');
  const [root, ...rest] = arg.split('.');
  if (!(CONDITION_ROOTS as readonly string[]).includes(root ?? '')) {
    throw new ConditionError(`JSON logic: var '${arg.slice(0, 80)}' must start with ${CONDITION_ROOTS.join(', ')}`);
  }
  if (rest.length > MAX_CONDITION_DEPTH) throw new ConditionError(`a path longer than ${MAX_CONDITION_DEPTH}`);
  const keys = rest.map((k) => (/^\d+$/.test(k) ? Number(k) : k));
  return { k: 'path', root: root as ConditionRoot, keys };
}

/** Compiles `notifyWhen`, or ConditionError. */
export function compileCondition(when: NotifyWhen): CompiledCondition {
  if (typeof when === 'string') {
    if (when.trim() === 'changed') return { kind: 'changed' };
    return { kind: 'condition', node: parseExpression(when) };
  }
  const node = fromJsonLogic(when); // depth first: a deeply nested object is refused before it is written out
  if (JSON.stringify(when).length > MAX_LOGIC_CHARS) {
    throw new ConditionError(`JSON logic longer than ${MAX_LOGIC_CHARS} characters`);
  }
  return { kind: 'condition', node };
}

/** Whether a condition holds on a run's result. */
export function conditionHolds(node: ConditionNode, data: ConditionData): boolean {
  return truthy(evaluate(node, data));
}

/** A `--notify-when` text as given on the command line: `changed`, an expression, or a JSON-logic object. */
export function notifyWhenOf(text: string): NotifyWhen {
  const t = text.trim();
  if (!t.startsWith('{')) return t;
  let parsed: unknown;
  try {
    parsed = JSON.parse(t);
  } catch (err) {
    throw new ConditionError(`not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConditionError('JSON logic must be an object');
  }
  return parsed as Record<string, unknown>;
}
