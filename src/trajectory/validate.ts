// Schema checks that turn zod failures into our typed errors, naming the file and line (or the record) at fault.
import type { z } from 'zod';

import { CorruptFileError, InvalidRecordError } from './errors';

/** A one-line account of what zod rejected, e.g. `content.action: expected string, received undefined`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

/** Parse content read from `file` (at `line` for .jsonl), or throw CorruptFileError. */
export function parseStored<T extends z.ZodType>(schema: T, value: unknown, file: string, line?: number): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new CorruptFileError(file, line, describeIssues(result.error), { cause: result.error });
  return result.data;
}

/** Parse a record a caller hands us for writing, or throw InvalidRecordError. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new InvalidRecordError(what, describeIssues(result.error), { cause: result.error });
  return result.data;
}

/** Parse JSON text read from `file`, or throw CorruptFileError. */
export function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CorruptFileError(file, undefined, 'not valid JSON (truncated or damaged)', { cause: error });
  }
}
