// Each task's report and step table as MCP resources: `cua://tasks/{id}/report` (the run as text, as `cua show`
// prints it) and `cua://tasks/{id}/steps` (the compact table get_steps returns, as JSON). resources/list names the
// newest tasks' resources (through the typed client's list); resources/read reads one. A resource the server cannot
// give (an unknown task, a URI not of this form) is a JSON-RPC error of one line.
import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { TaskNotFoundError } from '../client/client';
import type { TaskSnapshot } from '../client/client';
import { TASK_ID } from '../console/data';
import { readRunFromStore } from '../src/trajectory/reader';
import { REQUEST_JOURNAL, runTextLines } from '../src/viewer/run-text';
import type { McpDeps } from './deps';
import { stepTable } from './run-tools';

/** How many tasks resources/list names (the newest): list_tasks finds older ones. */
export const LISTED_TASKS = 50;

export type TaskResourceKind = 'report' | 'steps';

const KINDS: readonly TaskResourceKind[] = ['report', 'steps'];

/** JSON-RPC error codes: the MCP spec's "resource not found", and a bad argument. */
export const RESOURCE_NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** A resource the server cannot give: its JSON-RPC code and one line. */
export class ResourceError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export function taskResourceUri(id: string, kind: TaskResourceKind): string {
  return `cua://tasks/${encodeURIComponent(id)}/${kind}`;
}

/** The task id and kind a URI names, or a ResourceError (invalid params) saying what it should look like. */
export function parseTaskResourceUri(uri: string): { id: string; kind: TaskResourceKind } {
  const m = /^cua:\/\/tasks\/([^/]+)\/([a-z]+)$/.exec(uri);
  const id = m ? decodeURIComponent(m[1]!) : '';
  const kind = KINDS.find((k) => k === m?.[2]);
  if (!kind || !TASK_ID.test(id)) {
    throw new ResourceError(INVALID_PARAMS, `not a task resource: ${uri} (cua://tasks/<task id>/report or …/steps)`);
  }
  return { id, kind };
}

/** A failure as a ResourceError: an unknown task is "not found"; anything else is its first line. */
export function resourceErrorOf(err: unknown): ResourceError {
  if (err instanceof ResourceError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const line = message.split('\n')[0] ?? message;
  return new ResourceError(err instanceof TaskNotFoundError ? RESOURCE_NOT_FOUND : INTERNAL_ERROR, line);
}

/** The task's state now; an unknown one is a ResourceError (not found). */
export async function taskStatus(deps: McpDeps, id: string): Promise<TaskSnapshot> {
  try {
    return await (await deps.client()).status(id);
  } catch (err) {
    throw resourceErrorOf(err);
  }
}

/** The report: the run as `cua show` prints it, under a line with the task's live status. */
async function reportText(deps: McpDeps, snap: TaskSnapshot): Promise<string> {
  const head = `task ${snap.id}: ${snap.status}, step ${snap.step}${snap.question ? ` · asks: ${snap.question.text}` : ''}`;
  const store = deps.store();
  try {
    const run = await readRunFromStore(store, snap.id);
    const journal = (await store.readText(`${snap.id}/${REQUEST_JOURNAL}`).catch(() => undefined)) ?? '';
    return [head, ...runTextLines(run, journal, run.location)].join('\n') + '\n';
  } catch (err) {
    const why = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
    return `${head}\nits run folder cannot be read yet: ${why}\n`;
  }
}

/** One resource's contents. */
export async function readTaskResource(deps: McpDeps, uri: string): Promise<ReadResourceResult> {
  const { id, kind } = parseTaskResourceUri(uri);
  const snap = await taskStatus(deps, id);
  try {
    if (kind === 'report') return { contents: [{ uri, mimeType: 'text/plain', text: await reportText(deps, snap) }] };
    const table = await stepTable(await deps.client(), id);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(table, null, 2) }] };
  } catch (err) {
    throw resourceErrorOf(err);
  }
}

/** The newest tasks' resources of one kind. */
async function listed(deps: McpDeps, kind: TaskResourceKind): Promise<{ resources: Resource[] }> {
  try {
    const rows = await (await deps.client()).list({ limit: LISTED_TASKS });
    const resources = rows.map((r) => ({
      uri: taskResourceUri(r.id, kind),
      name: `${r.id} ${kind}`,
      description: `${r.status}, step ${r.step ?? 0}: ${r.instruction.slice(0, 200)}`,
    }));
    return { resources };
  } catch (err) {
    throw resourceErrorOf(err);
  }
}

export function registerResources(server: McpServer, deps: McpDeps): void {
  server.registerResource(
    'task-report',
    new ResourceTemplate('cua://tasks/{id}/report', { list: () => listed(deps, 'report') }),
    {
      title: "A task's report",
      description:
        "The task's run as text: its live status, instruction, answer, usage and one line per step (as `cua show`).",
      mimeType: 'text/plain',
    },
    (uri) => readTaskResource(deps, uri.href),
  );
  server.registerResource(
    'task-steps',
    new ResourceTemplate('cua://tasks/{id}/steps', { list: () => listed(deps, 'steps') }),
    {
      title: "A task's steps",
      description: 'The steps so far as JSON, one row per decision: step, action, summary, URL (as get_steps).',
      mimeType: 'application/json',
    },
    (uri) => readTaskResource(deps, uri.href),
  );
}
