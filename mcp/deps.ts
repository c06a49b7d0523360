// What the MCP tools work with (the typed client, the run store, the config's names and links, what callers may
// answer) and how a tool answers: a JSON result, or a refusal as a tool error carrying the command line's one line.
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AgentClient, CallerPolicy } from '../client/client';
import { TASK_ID } from '../console/data';
import type { RunStore } from '../src/trajectory/store';

export interface McpDeps {
  /** The typed client once the Temporal server has answered; until then a refusal saying the server waits for it. */
  client: () => Promise<AgentClient>;
  /** The run store the workers write to (screenshots, saved sign-ins). */
  store: () => RunStore;
  /** The model endpoint names of the config's `models` (empty: the workers' own `default`). */
  endpoints: readonly string[];
  /** The family each endpoint declares (config `models.<name>.family`). */
  families: Readonly<Record<string, string>>;
  /** The Temporal Web UI to link each task to, if any. */
  temporalUiUrl: string | null;
  namespace: string;
  /** The web console to link each task to (config `mcp.consoleUrl`), if any. */
  consoleUrl: string | null;
  /** Where run folders are on this machine (a folder store), else null (S3). */
  runsDir: string | null;
  /** Whether callers may answer approvals and providers' safety checks (config `mcp.callersMayApprove`). */
  callersMayApprove: boolean;
  /** What the tasks callers start, fork or replay may use (config `mcp.callers`); absent: what any task may. */
  policy?: CallerPolicy;
  /** How often a wait asks Temporal for the task's status (default 500 ms). */
  pollMs?: number;
}

/** The longest a tool call waits for a task, in seconds: a client's request should not outlive its timeout. */
export const MAX_WAIT_SECONDS = 60;

export const taskIdArg = z
  .string()
  .regex(TASK_ID, 'a task id: letters, digits, dot, dash, underscore and colon')
  .describe('The task id start_task (or list_tasks) returned');

export const waitSecondsArg = z
  .number()
  .min(0)
  .max(MAX_WAIT_SECONDS, `wait_seconds is at most ${MAX_WAIT_SECONDS}: call wait_for_task again to wait longer`);

export const outputSchemaArg = z
  .record(z.string(), z.unknown())
  .optional()
  .describe(
    "A JSON Schema (an object) for the task's result: when it ends, its answer and final page are turned into JSON " +
      'this schema validates, returned as `output` by get_task',
  );

/** A tool's answer: the value as JSON text (for any model) and as structured content (for programs). */
export function answer(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

/** A refusal: a tool error (not a protocol error) whose text is the error's first line, as `cua` prints it. */
export function refusal(err: unknown): CallToolResult {
  const message = err instanceof Error ? err.message : String(err);
  return { content: [{ type: 'text', text: message.split('\n')[0] ?? message }], isError: true };
}

/** Runs a tool's work; whatever it throws becomes a refusal. */
export async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    return refusal(err);
  }
}

/** A refusal the server makes itself (not one of the client's typed errors), one line. */
export class McpRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
