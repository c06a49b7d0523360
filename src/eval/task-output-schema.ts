// A task set row's `output_schema` (docs/output.md): a JSON Schema object written in the row, or the path of a JSON
// file relative to the task set's own file, in its folder (a set in the run store gives its schemas in the row). Read
// where the set is parsed (the eval command, and a worker's eval activities), checked like every start's schema.
import fs from 'node:fs';
import path from 'node:path';
import { outputSchemaIssue, parseOutputSchemaText } from '../agent/output-schema';

/**
 * The row's output schema, or throws a one-line message (the caller adds file, line and field). `setWhere`: the
 * set's path, or `store:KEY` for one in the run store.
 */
export function rowOutputSchema(value: Record<string, unknown> | string, setWhere: string): Record<string, unknown> {
  if (typeof value !== 'string') {
    const issue = outputSchemaIssue(value);
    if (issue) throw new Error(issue);
    return value;
  }
  // `store:KEY` (task-source.ts, which imports the task set's parser: no import back from here).
  if (setWhere.startsWith('store:')) {
    throw new Error('a task set in the run store gives its output schema in the row (an object), not as a file');
  }
  const dir = path.dirname(path.resolve(setWhere));
  const file = path.resolve(dir, value);
  let text: string;
  try {
    // Inside the set's own folder only, links resolved (a worker reads no file its operator did not put there).
    const real = fs.realpathSync(file);
    if (path.isAbsolute(value) || !real.startsWith(fs.realpathSync(dir) + path.sep)) {
      throw new Error(`${value} is not in the task set's folder`);
    }
    text = fs.readFileSync(real, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code ? `cannot read ${value} (${code})` : (err as Error).message);
  }
  try {
    return parseOutputSchemaText(text);
  } catch (err) {
    throw new Error(`${value}: ${(err as Error).message}`);
  }
}
