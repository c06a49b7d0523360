// A task's output schema (docs/output.md), checked and used with a maintained JSON Schema validator (ajv): whether a
// schema is one a task may carry (a JSON object, small, that compiles), and what a value's validation errors say, one
// line each. Where a task starts (client, `cua run`, the console, MCP, a task set) a bad schema is refused in one
// line; the worker compiles it again before it validates the extraction. Not for workflow code (ajv is no
// deterministic sandbox import).
import Ajv from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { MAX_OUTPUT_SCHEMA_CHARS } from '../contract/task';

/** At most this many validation errors are told (to the person, and to the model on its second try). */
export const MAX_ERROR_LINES = 20;

/** One validator per JSON Schema draft the schema's `$schema` names (draft-07 when it names none). */
function validatorFor(schema: Record<string, unknown>): Ajv {
  const dialect = typeof schema['$schema'] === 'string' ? schema['$schema'] : '';
  // allErrors: the model's second try hears everything that was wrong; formats are not checked (no format set).
  const options = { allErrors: true, strict: false, validateFormats: false, logger: false } as const;
  if (dialect.includes('2020-12')) return new Ajv2020(options);
  if (dialect.includes('2019-09')) return new Ajv2019(options);
  return new Ajv(options);
}

/** The schema compiled into a validator; throws OutputSchemaError (one line) when it is none a task may carry. */
export function compileOutputSchema(schema: unknown): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new OutputSchemaError('not a JSON object');
  }
  const json = JSON.stringify(schema);
  if (json.length > MAX_OUTPUT_SCHEMA_CHARS) {
    throw new OutputSchemaError(`too big: more than ${MAX_OUTPUT_SCHEMA_CHARS / 1024} KB of JSON`);
  }
  try {
    return validatorFor(schema as Record<string, unknown>).compile(schema);
  } catch (err) {
    throw new OutputSchemaError(`not a valid JSON Schema: ${oneLine(err)}`);
  }
}

/** Why the schema cannot be a task's output schema (one line), or undefined when it can (or there is none). */
export function outputSchemaIssue(schema: unknown): string | undefined {
  if (schema === undefined) return undefined;
  try {
    compileOutputSchema(schema);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A schema given as text (a file's, a form's): parsed, or OutputSchemaError when it is no JSON object. */
export function parseOutputSchemaText(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new OutputSchemaError(`not JSON: ${oneLine(err)}`);
  }
  compileOutputSchema(parsed);
  return parsed as Record<string, unknown>;
}

/**
 * The validator's errors, one line each: `/price must be number`, `(root) must have required property 'name'`,
 * `(root) must NOT have additional properties ('extra')`.
 */
export function validationErrorLines(errors: readonly ErrorObject[] | null | undefined): string[] {
  const lines = (errors ?? []).map((e) => {
    const extra = e.keyword === 'additionalProperties' ? ` ('${String(e.params['additionalProperty'])}')` : '';
    return `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${extra}`;
  });
  const unique = [...new Set(lines)];
  return unique.length > MAX_ERROR_LINES
    ? [...unique.slice(0, MAX_ERROR_LINES), `… and ${unique.length - MAX_ERROR_LINES} more`]
    : unique;
}

/** A schema no task may carry: its message is the one line a starter shows. */
export class OutputSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

const oneLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
