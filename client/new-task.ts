// What a person chooses when starting a task — `cua run`'s flags, the web console's form — as the NewTask that
// AgentClient.start takes: the same fields, the same defaults, the same refusals (one line each) wherever it starts.
import { parseOutputSchemaText } from '../src/agent/output-schema';
import { InvalidTaskInputError } from './errors';
import type { TaskInputArgs } from '../src/contract/task';

export interface StartChoices {
  instruction: string;
  /** browser (default), desktop, or an environment a worker hosts. */
  environment?: string | undefined;
  /** The browser's first page (none for a desktop task). */
  startUrl?: string | undefined;
  maxSteps?: number | undefined;
  /** The endpoint's name in the workers' config `models` (default `default`), and per-task overrides of it. */
  endpoint?: string | undefined;
  baseUrl?: string | undefined;
  model?: string | undefined;
  id?: string | undefined;
  /** The output schema (docs/output.md): a JSON Schema object, or its JSON text (a form's field); '' means none. */
  outputSchema?: Record<string, unknown> | string | undefined;
}

/** The fields of a new task these choices make (the id left out when none is chosen: `start` makes one). */
export function newTaskOf(c: StartChoices): Omit<TaskInputArgs, 'runId'> & { id?: string } {
  if (c.environment === 'desktop' && c.startUrl) {
    throw new InvalidTaskInputError('startUrl', 'is for the browser; a desktop task starts on an empty desktop');
  }
  return {
    ...(c.id !== undefined ? { id: c.id } : {}),
    instruction: c.instruction,
    ...(c.environment ? { environment: c.environment } : {}),
    ...(c.startUrl ? { startUrl: c.startUrl } : {}),
    ...(c.maxSteps !== undefined ? { maxSteps: c.maxSteps } : {}),
    ...outputSchemaOf(c.outputSchema),
    model: {
      endpoint: c.endpoint ?? 'default',
      ...(c.baseUrl ? { baseUrl: c.baseUrl } : {}),
      ...(c.model ? { model: c.model } : {}),
    },
  };
}

/** The choices' output schema as task input: text parsed; a bad one refused (InvalidTaskInputError, one line). */
function outputSchemaOf(schema: StartChoices['outputSchema']): { outputSchema?: Record<string, unknown> } {
  if (schema === undefined || (typeof schema === 'string' && schema.trim() === '')) return {};
  try {
    return { outputSchema: typeof schema === 'string' ? parseOutputSchemaText(schema) : schema };
  } catch (err) {
    throw new InvalidTaskInputError('outputSchema', (err as Error).message);
  }
}
