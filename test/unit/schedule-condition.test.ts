// A monitor's condition (`--notify-when`): the expression parser and evaluator, the JSON-logic subset, and the
// refusals of hostile or wrong input, each one line. Table-driven.
import { describe, expect, it } from 'vitest';
import { ConditionError, evaluate, jsonEqual, parseExpression } from '../../src/contract/condition';
import { compileCondition, conditionHolds, notifyWhenOf } from '../../src/contract/condition-logic';
import type { ConditionData } from '../../src/contract/condition';

const DATA: ConditionData = {
  output: { price: 95.5, name: 'Hotel Sol', inStock: true, tags: ['a', 'b'], rooms: [{ n: 2 }], 'a b': 1, zero: 0 },
  answer: 'The price is 95.50',
  status: 'complete',
};

const holds = (src: string, data: ConditionData = DATA) => conditionHolds(parseExpression(src), data);

describe('expressions: what holds', () => {
  it.each([
    ['output.price < 100', true],
    ['output.price <= 95.5', true],
    ['output.price > 100', false],
    ['output.price >= -1', true],
    ['output.price == 95.5', true],
    ['output.price != 95.5', false],
    ["output.name == 'Hotel Sol'", true],
    ['output.name == "Hotel Sol"', true],
    ['output.inStock', true],
    ['!output.inStock', false],
    ['!!output.inStock', true],
    ['output.inStock && output.price < 100', true],
    ['output.inStock && output.price > 100', false],
    ['output.price > 100 || output.name == "Hotel Sol"', true],
    ['!(output.price > 100) && (output.zero == 0)', true],
    ['output.tags[1] == "b"', true],
    ['output.rooms[0].n == 2', true],
    ['output["a b"] == 1', true],
    ['output.missing == null', true],
    ['output.missing < 100', false], // a missing value is never less than anything
    ['output.name < 100', false], // nor is a string
    ['output.missing.deeper == null', true],
    ['output.tags[9] == null', true],
    ['status == "complete"', true],
    ['answer != null', true],
    ['true', true],
    ['null', false],
    ['output.zero', false],
    ['output.price < 100 && output.inStock || false', true],
  ])('%s → %s', (src, expected) => {
    expect(holds(src)).toBe(expected);
  });

  it('&& binds tighter than ||', () => {
    expect(holds('true || false && false')).toBe(true);
    expect(holds('(true || false) && false')).toBe(false);
  });

  it('reads own properties only: never a prototype', () => {
    expect(evaluate(parseExpression('output.constructor'), DATA)).toBeNull();
    expect(evaluate(parseExpression('output.__proto__'), DATA)).toBeNull();
    expect(evaluate(parseExpression('output.tags.length'), DATA)).toBeNull();
    expect(holds('output.toString == null')).toBe(true);
  });
});

describe('expressions: refused in one line', () => {
  it.each([
    ['', /empty/],
    ['output.price <', /missing at the end/],
    ['output.price < 100 100', /unexpected '100'/],
    ['price < 100', /unknown name 'price'.*output, answer, status/],
    ['process.exit()', /unknown name 'process'/],
    ['output.price; 1', /unexpected ';'/],
    ['output.a = 1', /unexpected '='/],
    ['(output.price < 100', /expected '\)' at the end/],
    ['output.', /expected a name after '\.'/],
    ['output[-1]', /expected an index/],
    ['"abc', /unterminated string/],
    ['"a\\q"', /unknown escape/],
    ['output.price - 1 < 100', /unexpected '-'/],
    ['`x`', /unexpected '`'/],
    ['output.f(1)', /unexpected '\('/],
  ])('%j', (src, message) => {
    const err = (() => {
      try {
        parseExpression(src);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConditionError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
  });

  it('hostile sizes: long, deeply nested, long paths', () => {
    expect(() => parseExpression('1 == 1 && '.repeat(300) + 'true')).toThrow(/longer than 2000/);
    expect(() => parseExpression('('.repeat(60) + 'true' + ')'.repeat(60))).toThrow(/nested deeper than 40/);
    expect(() => parseExpression('!'.repeat(60) + 'true')).toThrow(/nested deeper than 40/);
    expect(() => parseExpression('output' + '.a'.repeat(50))).toThrow(/a path longer than 40/);
  });
});

describe('JSON logic (the subset)', () => {
  it.each([
    [{ '<': [{ var: 'output.price' }, 100] }, true],
    [{ '>=': [{ var: 'output.price' }, 100] }, false],
    [{ and: [{ var: 'output.inStock' }, { '==': [{ var: 'output.rooms.0.n' }, 2] }] }, true],
    [{ or: [false, { '!': { var: 'output.zero' } }] }, true],
    [{ '!=': [{ var: 'status' }, 'failed'] }, true],
    [{ '===': [{ var: 'output.name' }, 'Hotel Sol'] }, true],
  ])('%j → %s', (rule, expected) => {
    const c = compileCondition(rule);
    expect(c.kind).toBe('condition');
    if (c.kind === 'condition') expect(conditionHolds(c.node, DATA)).toBe(expected);
  });

  it.each([
    [{ '+': [1, 2] }, /unsupported operation '\+'/],
    [{ '<': [1] }, /takes two arguments/],
    [{ var: 'price' }, /must start with output, answer, status/],
    [{ '<': [1, 2], '>': [1, 2] }, /one key/],
    [{ '!': [[1]] }, /an array is only/],
  ])('%j is refused', (rule, message) => {
    expect(() => compileCondition(rule)).toThrow(message);
  });

  it('deep nesting is refused, not a stack overflow', () => {
    let rule: unknown = true;
    for (let i = 0; i < 100_000; i++) rule = { '!': rule };
    expect(() => compileCondition(rule as Record<string, unknown>)).toThrow(ConditionError);
  });
});

describe('--notify-when as typed', () => {
  it('changed, an expression, or JSON', () => {
    expect(compileCondition(notifyWhenOf(' changed '))).toEqual({ kind: 'changed' });
    expect(notifyWhenOf('output.price < 100')).toBe('output.price < 100');
    expect(notifyWhenOf('{"<": [{"var": "output.price"}, 100]}')).toEqual({ '<': [{ var: 'output.price' }, 100] });
    expect(() => notifyWhenOf('{"<": ')).toThrow(/not valid JSON/);
  });

  it('deep equality, for `changed`', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ price: 120 }, { price: 95 })).toBe(false);
    expect(jsonEqual(null, undefined)).toBe(true);
    expect(jsonEqual({ a: undefined }, {})).toBe(true);
  });
});
