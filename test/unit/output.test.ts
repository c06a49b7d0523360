// Specification of structured output's pure parts (docs/output.md): a bad output schema is refused at start in one
// line (not JSON, not an object, no valid JSON Schema, too big) wherever a task starts, the model's JSON is read
// leniently, validation errors are one line each, and the extraction's prompts carry what they must.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';

import {
  compileOutputSchema,
  MAX_ERROR_LINES,
  outputSchemaIssue,
  parseOutputSchemaText,
  validationErrorLines,
} from '../../src/agent/output-schema';
import { extractionMessages, outputLine, parseOutputJson, retryMessages } from '../../src/agent/output-extract';
import { parseTask } from '../../client/client';
import { newTaskOf } from '../../client/new-task';
import { outputSchemaFlag } from '../../cli/commands/run';
import { parseTaskSet } from '../../src/eval/task-set';
import { MAX_OUTPUT_SCHEMA_CHARS } from '../../src/contract/task';
import { CALL_KIND_HEADER, ENTRY_INDEX_HEADER, startScriptedModelServer } from '../../src/scripted/server';

const PRICE = {
  type: 'object',
  properties: { price: { type: 'number' }, currency: { type: 'string' } },
  required: ['price'],
  additionalProperties: false,
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-output-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const oneLine = (text: string) => expect(text).not.toContain('\n');

describe('a bad output schema is refused in one line', () => {
  it.each<[string, unknown, RegExp]>([
    ['an array', [1, 2], /^not a JSON object$/],
    ['a string', 'price', /^not a JSON object$/],
    ['null', null, /^not a JSON object$/],
    ['an unknown type', { type: 'money' }, /^not a valid JSON Schema: .*type/],
    ['a bad required', { type: 'object', required: 'price' }, /^not a valid JSON Schema: /],
    ['a dangling $ref', { $ref: '#/definitions/nowhere' }, /^not a valid JSON Schema: .*nowhere/],
    ['too big', { description: 'x'.repeat(MAX_OUTPUT_SCHEMA_CHARS) }, /^too big: more than 64 KB of JSON$/],
  ])('%s', (_name, schema, line) => {
    const issue = outputSchemaIssue(schema);
    expect(issue).toMatch(line);
    oneLine(issue ?? '');
  });

  it('text that is no JSON', () => {
    expect(() => parseOutputSchemaText('{"type": "object",')).toThrow(/^not JSON: /);
  });

  it('accepts a good one, draft-07 or 2020-12', () => {
    expect(outputSchemaIssue(PRICE)).toBeUndefined();
    expect(outputSchemaIssue({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...PRICE })).toBeUndefined();
    expect(outputSchemaIssue(undefined)).toBeUndefined();
  });

  it('by the client, naming the field', () => {
    const start = () => parseTask({ instruction: 'x', outputSchema: { type: 'money' } });
    expect(start).toThrow(/^invalid task: outputSchema: not a valid JSON Schema: /);
    expect(() => parseTask({ instruction: 'x', outputSchema: { description: 'x'.repeat(70_000) } })).toThrow(
      /^invalid task: outputSchema: too big/,
    );
    expect(parseTask({ instruction: 'x', outputSchema: PRICE }).outputSchema).toEqual(PRICE);
  });

  it("by the console's form and MCP (newTaskOf): text parsed, '' is none", () => {
    expect(newTaskOf({ instruction: 'x', outputSchema: JSON.stringify(PRICE) }).outputSchema).toEqual(PRICE);
    expect(newTaskOf({ instruction: 'x', outputSchema: '  ' }).outputSchema).toBeUndefined();
    expect(() => newTaskOf({ instruction: 'x', outputSchema: '[1]' })).toThrow(
      /^invalid task: outputSchema: not a JSON object$/,
    );
  });

  it('by cua run --output-schema FILE', () => {
    const bad = path.join(tmp, 'bad.json');
    fs.writeFileSync(bad, '{"type": "money"}');
    expect(() => outputSchemaFlag(bad)).toThrow(/^--output-schema .*bad\.json: not a valid JSON Schema: /);
    expect(() => outputSchemaFlag(path.join(tmp, 'none.json'))).toThrow(/cannot read it \(ENOENT\)$/);
    const good = path.join(tmp, 'good.json');
    fs.writeFileSync(good, JSON.stringify(PRICE));
    expect(outputSchemaFlag(good)).toEqual({ outputSchema: PRICE });
    expect(outputSchemaFlag(undefined)).toEqual({});
  });

  it("by a task set's row: an object, or a file beside the set", () => {
    fs.writeFileSync(path.join(tmp, 'price.schema.json'), JSON.stringify(PRICE));
    const set = (rows: object[]) => ({
      name: 'set.jsonl',
      where: path.join(tmp, 'set.jsonl'),
      text: rows.map((r) => JSON.stringify(r)).join('\n'),
    });
    const [inline, file] = parseTaskSet(
      set([
        { id: 'a', instruction: 'x', output_schema: PRICE },
        { id: 'b', instruction: 'x', output_schema: 'price.schema.json' },
      ]),
    );
    expect(inline?.outputSchema).toEqual(PRICE);
    expect(file?.outputSchema).toEqual(PRICE);
    expect(() => parseTaskSet(set([{ id: 'a', instruction: 'x', output_schema: { type: 'money' } }]))).toThrow(
      /^set\.jsonl:1: field 'output_schema': not a valid JSON Schema: /,
    );
    expect(() => parseTaskSet(set([{ id: 'a', instruction: 'x', output_schema: '../outside.json' }]))).toThrow(
      /^set\.jsonl:1: field 'output_schema': cannot read \.\.\/outside\.json \(ENOENT\)$/,
    );
    const inStore = { ...set([{ id: 'a', instruction: 'x', output_schema: 'price.schema.json' }]), where: 'store:s' };
    expect(() => parseTaskSet(inStore)).toThrow(/gives its output schema in the row/);
  });
});

describe("the model's JSON, read leniently", () => {
  it.each<[string, string, unknown]>([
    ['plain JSON', '{"price": 12.5}', { price: 12.5 }],
    ['a ```json fence', 'Here it is:\n```json\n{"price": 12.5}\n```\nDone.', { price: 12.5 }],
    ['a bare ``` fence', '```\n{"price": 3}\n```', { price: 3 }],
    [
      'prose before and after',
      'The output is {"price": 9, "currency": "EUR"} as asked.',
      { price: 9, currency: 'EUR' },
    ],
    ['a trailing comma', '{"price": 9,}', { price: 9 }],
    ['an array', 'Result: [1, 2, 3]', [1, 2, 3]],
    ['a bare value', '42', 42],
  ])('%s', (_name, reply, value) => {
    expect(parseOutputJson(reply)).toEqual({ ok: true, value });
  });

  it('says so when there is none', () => {
    expect(parseOutputJson('The price is twelve euros.')).toEqual({ ok: false, error: 'the reply holds no JSON' });
    expect(parseOutputJson('  ')).toEqual({ ok: false, error: 'the reply is empty' });
  });
});

describe('validation errors', () => {
  const validate = compileOutputSchema(PRICE);

  it('are one line each, naming where', () => {
    expect(validate({ price: 'twelve', extra: 1 })).toBe(false);
    const lines = validationErrorLines(validate.errors);
    expect(lines).toEqual(["(root) must NOT have additional properties ('extra')", '/price must be number']);
    expect(validate({})).toBe(false);
    expect(validationErrorLines(validate.errors)).toEqual(["(root) must have required property 'price'"]);
  });

  it('are cut at a limit', () => {
    const many = compileOutputSchema({ type: 'array', items: { type: 'number' } });
    many(Array.from({ length: 30 }, () => 'x'));
    const lines = validationErrorLines(many.errors);
    expect(lines).toHaveLength(MAX_ERROR_LINES + 1);
    expect(lines.at(-1)).toBe('… and 10 more');
  });
});

describe("the extraction's prompts", () => {
  const facts = { schema: PRICE, answer: 'It costs €12.50', facts: ['Order 4411'], pageText: 'Price: €12.50' };

  it('carry the schema, the answer, the facts and the page text', () => {
    const [system, user] = extractionMessages({ ...facts, partial: false });
    expect(system?.content).toMatch(/JSON Schema/);
    const text = String(user?.content);
    for (const part of ['"price"', 'It costs €12.50', '- Order 4411', 'Price: €12.50']) expect(text).toContain(part);
    expect(text).not.toMatch(/budget/);
    expect(String(extractionMessages({ ...facts, partial: true })[1]?.content)).toMatch(/step or cost budget/);
  });

  it('cut the page text at the page-question limit', () => {
    const user = String(extractionMessages({ ...facts, pageText: 'p'.repeat(500), partial: false }, 100)[1]?.content);
    expect(user).toContain('[page text cut at 100 characters]');
  });

  it('give the second try the first reply and its errors', () => {
    const first = extractionMessages({ ...facts, partial: false });
    const again = retryMessages(first, '{"price": "12.50"}', ['/price must be number']);
    expect(again.slice(0, 2)).toEqual(first);
    expect(again[2]).toEqual({ role: 'assistant', content: '{"price": "12.50"}' });
    expect(String(again[3]?.content)).toContain('- /price must be number');
  });
});

describe('the output as one line', () => {
  it.each<[string, Parameters<typeof outputLine>, string | undefined]>([
    ['no schema', [undefined], undefined],
    ['an output', [{ value: { price: 12.5 }, partial: false }], 'output: {"price":12.5}'],
    ['a partial one', [{ value: { price: 1 }, partial: true }], 'output (partial): {"price":1}'],
    ['none, saying why', [null, 'no valid output after 2 calls'], 'no output: no valid output after 2 calls'],
  ])('%s', (_name, args, line) => {
    expect(outputLine(...args)).toBe(line);
  });
});

describe("the scripted model answers the extraction from its script's `extract` replies", () => {
  const ask = async (client: OpenAI, script: string, attempt: number) => {
    const headers = { [CALL_KIND_HEADER]: 'extract', [ENTRY_INDEX_HEADER]: String(attempt) };
    const res = await client.chat.completions.create(
      { model: script, messages: [{ role: 'user', content: 'x' }] },
      {
        headers,
      },
    );
    return res.choices[0]?.message.content;
  };

  it('by try, the last repeating; a script without them is refused', async () => {
    const dir = path.join(tmp, 'scripts');
    fs.mkdirSync(dir, { recursive: true });
    const entries = [{ thoughts: '', action: { action: 'terminate', status: 'success' } }];
    fs.writeFileSync(path.join(dir, 'two.json'), JSON.stringify({ entries, extract: ['not json', '{"price": 1}'] }));
    fs.writeFileSync(path.join(dir, 'none.json'), JSON.stringify({ entries }));
    const server = await startScriptedModelServer({ scriptsDir: dir, port: 0 });
    try {
      const client = new OpenAI({ baseURL: server.url, apiKey: 'x', maxRetries: 0 });
      expect(await ask(client, 'two', 0)).toBe('not json');
      expect(await ask(client, 'two', 1)).toBe('{"price": 1}');
      expect(await ask(client, 'two', 5)).toBe('{"price": 1}');
      await expect(ask(client, 'none', 0)).rejects.toThrow(/has no extract replies/);
      expect(server.requests.map((r) => r.call)).toEqual(['extract', 'extract', 'extract', 'extract']);
    } finally {
      await server.close();
    }
  });
});
