// A schedule's monitor condition (`--notify-when`): `changed`, a small expression over a run's result such as
// `output.price < 100 && output.inStock`, or a JSON-logic object (condition-logic.ts). A hand-written parser and
// evaluator, never eval: paths into the result (own properties only), numbers, strings, booleans, null, the
// comparisons == != < <= > >=, && || ! and parentheses. Bounded in length and depth so hostile input fails in one line.
// Pure: the monitor workflow evaluates it, the task contract checks it at create.

/** What a condition reads: the run's output value, its answer text and its state. */
export const CONDITION_ROOTS = ['output', 'answer', 'status'] as const;
export type ConditionRoot = (typeof CONDITION_ROOTS)[number];
export type ConditionData = Record<ConditionRoot, unknown>;

export const MAX_CONDITION_CHARS = 2000;
/** How deeply parentheses, negations and operators may nest. */
export const MAX_CONDITION_DEPTH = 40;

export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';
export type ConditionNode =
  | { k: 'lit'; v: string | number | boolean | null }
  | { k: 'path'; root: ConditionRoot; keys: (string | number)[] }
  | { k: 'not'; a: ConditionNode }
  | { k: 'and' | 'or'; a: ConditionNode; b: ConditionNode }
  | { k: 'cmp'; op: CompareOp; a: ConditionNode; b: ConditionNode };

/** A condition that cannot be read; the message is one line and says where. */
export class ConditionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

type Token =
  | { t: 'num'; v: number; at: number }
  | { t: 'str'; v: string; at: number }
  | { t: 'id'; v: string; at: number }
  | { t: 'op'; v: string; at: number };

const OPERATORS = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '!', '(', ')', '.', '[', ']'];
const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/;
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*/;
const ESCAPES: Record<string, string> = { '"': '"', "'": "'", '\\': '\\', n: '\n', t: '\t' };

function lex(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] ?? '';
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const rest = src.slice(i);
    const num = NUMBER.exec(rest);
    const prev = out.at(-1);
    // A minus is a number's sign only where a value may start (not after a value: `a -1` is refused below).
    if (num && (c !== '-' || !prev || prev.t === 'op')) {
      out.push({ t: 'num', v: Number(num[0]), at: i });
      i += num[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      const [v, end] = lexString(src, i, c);
      out.push({ t: 'str', v, at: i });
      i = end;
      continue;
    }
    const id = IDENT.exec(rest);
    if (id) {
      out.push({ t: 'id', v: id[0], at: i });
      i += id[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => rest.startsWith(o));
    if (!op) throw new ConditionError(`unexpected '${c}' at ${i + 1}`);
    out.push({ t: 'op', v: op, at: i });
    i += op.length;
  }
  return out;
}

function lexString(src: string, start: number, quote: string): [string, number] {
  let v = '';
  for (let i = start + 1; i < src.length; i++) {
    const c = src[i] ?? '';
    if (c === quote) return [v, i + 1];
    if (c === '\\') {
      const e = ESCAPES[src[i + 1] ?? ''];
      if (e === undefined) throw new ConditionError(`unknown escape in the string at ${start + 1}`);
      v += e;
      i++;
    } else v += c;
  }
  throw new ConditionError(`unterminated string at ${start + 1}`);
}

class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): ConditionNode {
    const node = this.or();
    const extra = this.tokens[this.i];
    if (extra) throw new ConditionError(`unexpected '${String(extra.v)}' at ${extra.at + 1}`);
    return node;
  }

  private nested<T>(f: () => T): T {
    if (++this.depth > MAX_CONDITION_DEPTH) throw new ConditionError(`nested deeper than ${MAX_CONDITION_DEPTH}`);
    try {
      return f();
    } finally {
      this.depth--;
    }
  }

  private isOp(v: string): boolean {
    const t = this.tokens[this.i];
    return t?.t === 'op' && t.v === v;
  }

  private expect(v: string): void {
    if (!this.isOp(v)) throw new ConditionError(`expected '${v}' ${this.where()}`);
    this.i++;
  }

  private where(): string {
    const t = this.tokens[this.i];
    return t ? `at ${t.at + 1}` : 'at the end';
  }

  private or(): ConditionNode {
    return this.chain('||', 'or', () => this.and());
  }

  private and(): ConditionNode {
    return this.chain('&&', 'and', () => this.unary());
  }

  /** Operands joined by one operator, left to right. */
  private chain(op: string, k: 'and' | 'or', operand: () => ConditionNode): ConditionNode {
    let a = operand();
    while (this.isOp(op)) {
      this.i++;
      a = { k, a, b: operand() };
    }
    return a;
  }

  private unary(): ConditionNode {
    if (!this.isOp('!')) return this.compare();
    this.i++;
    return this.nested(() => ({ k: 'not', a: this.unary() }));
  }

  private compare(): ConditionNode {
    const a = this.primary();
    const t = this.tokens[this.i];
    if (t?.t !== 'op' || !['==', '!=', '<', '<=', '>', '>='].includes(t.v)) return a;
    this.i++;
    return { k: 'cmp', op: t.v as CompareOp, a, b: this.primary() };
  }

  private primary(): ConditionNode {
    const t = this.tokens[this.i];
    if (!t) throw new ConditionError('a value is missing at the end');
    if (t.t === 'op' && t.v === '(') {
      this.i++;
      const inner = this.nested(() => this.or());
      this.expect(')');
      return inner;
    }
    this.i++;
    if (t.t === 'num' || t.t === 'str') return { k: 'lit', v: t.v };
    if (t.t === 'id') return this.word(t.v, t.at);
    throw new ConditionError(`unexpected '${t.v}' at ${t.at + 1}`);
  }

  private word(v: string, at: number): ConditionNode {
    if (v === 'true' || v === 'false') return { k: 'lit', v: v === 'true' };
    if (v === 'null') return { k: 'lit', v: null };
    if (!(CONDITION_ROOTS as readonly string[]).includes(v)) {
      throw new ConditionError(`unknown name '${v}' at ${at + 1} (a path starts with ${CONDITION_ROOTS.join(', ')})`);
    }
    const keys: (string | number)[] = [];
    for (;;) {
      if (this.isOp('.')) {
        this.i++;
        const key = this.tokens[this.i];
        if (key?.t !== 'id') throw new ConditionError(`expected a name after '.' ${this.where()}`);
        keys.push(key.v);
        this.i++;
      } else if (this.isOp('[')) {
        this.i++;
        const key = this.tokens[this.i];
        const index = key?.t === 'num' && Number.isInteger(key.v) && key.v >= 0;
        if (key?.t !== 'str' && !index) throw new ConditionError(`expected an index or a quoted name ${this.where()}`);
        keys.push(key!.v as string | number);
        this.i++;
        this.expect(']');
      } else break;
      if (keys.length > MAX_CONDITION_DEPTH) throw new ConditionError(`a path longer than ${MAX_CONDITION_DEPTH}`);
    }
    return { k: 'path', root: v as ConditionRoot, keys };
  }
}

/** Parses an expression, or ConditionError. */
export function parseExpression(src: string): ConditionNode {
  if (src.length > MAX_CONDITION_CHARS) throw new ConditionError(`longer than ${MAX_CONDITION_CHARS} characters`);
  if (!src.trim()) throw new ConditionError('empty');
  return new Parser(lex(src)).parse();
}

/** A property of a plain JSON value, own properties only (never a prototype's); null when absent. */
function child(value: unknown, key: string | number): unknown {
  if (Array.isArray(value)) return typeof key === 'number' && key < value.length ? (value[key] as unknown) : null;
  if (typeof value !== 'object' || value === null || typeof key !== 'string') return null;
  return Object.prototype.hasOwnProperty.call(value, key) ? (value as Record<string, unknown>)[key] : null;
}

/** Deep equality of JSON values (object keys in any order). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  const bo = b as Record<string, unknown>;
  return ka.every(
    (k) => Object.prototype.hasOwnProperty.call(bo, k) && jsonEqual((a as Record<string, unknown>)[k], bo[k]),
  );
}

/** JavaScript's truthiness on JSON values, as JSON logic has it: false, null, 0, "" and [] are false. */
export function truthy(v: unknown): boolean {
  return Array.isArray(v) ? v.length > 0 : Boolean(v);
}

function compare(op: CompareOp, a: unknown, b: unknown): boolean {
  if (op === '==') return jsonEqual(a, b);
  if (op === '!=') return !jsonEqual(a, b);
  const same = (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
  if (!same) return false; // a missing value, or a string against a number: never true
  const [x, y] = [a as number | string, b as number | string];
  return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
}

/** The node's value on `data` (an `&&`, `||`, `!` or comparison is a boolean). */
export function evaluate(node: ConditionNode, data: ConditionData): unknown {
  switch (node.k) {
    case 'lit':
      return node.v;
    case 'path':
      return node.keys.reduce<unknown>((v, key) => child(v, key), data[node.root] ?? null) ?? null;
    case 'not':
      return !truthy(evaluate(node.a, data));
    case 'and':
      return truthy(evaluate(node.a, data)) && truthy(evaluate(node.b, data));
    case 'or':
      return truthy(evaluate(node.a, data)) || truthy(evaluate(node.b, data));
    case 'cmp':
      return compare(node.op, evaluate(node.a, data), evaluate(node.b, data));
  }
}
