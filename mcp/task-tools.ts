// The MCP tools that start and follow tasks: start_task, get_task, wait_for_task, list_tasks. Each is a thin call of
// the typed client; a wait polls the task's status (at most 60 s per call) and sends progress notifications when the
// caller gave a progress token.
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { TASK_STATES } from '../src/contract/task';
import type { TaskState } from '../src/contract/task';
import { answer, guarded, MAX_WAIT_SECONDS, outputSchemaArg, taskIdArg, waitSecondsArg } from './deps';
import type { McpDeps } from './deps';
import { newTaskFrom } from './start';
import { taskView, waitForTask } from './task-view';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const LIST_LIMIT = 200;

/** Waits as wait_for_task does, with progress notifications for a caller that asked for them. */
async function waitWithProgress(deps: McpDeps, id: string, seconds: number, extra: Extra) {
  const token = extra._meta?.progressToken;
  return waitForTask(deps, id, {
    seconds,
    signal: extra.signal,
    onPoll: async (snap, elapsedMs) => {
      if (token === undefined) return;
      await extra.sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: Math.round(elapsedMs / 100) / 10,
          total: seconds,
          message: `${snap.status}, step ${snap.step}`,
        },
      });
    },
  });
}

export function registerTaskTools(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'start_task',
    {
      title: 'Start a durable computer-use task',
      description:
        'Starts a task: an agent works in a browser (or another environment) step by step until it has the answer, ' +
        'and may stop to ask a question. The task runs on its own and outlives this call, this client and this ' +
        'server: come back for it any time with get_task or wait_for_task. Returns the task id at once, with its ' +
        'state; with wait_seconds (at most 60) it returns as soon as the task ends or asks, or when the time is up.',
      inputSchema: {
        instruction: z.string().describe('What to do, in plain words, as you would tell a person'),
        start_url: z.string().optional().describe('The first page to open (browser tasks)'),
        model: z.string().optional().describe("The model endpoint's name in the server's config (default: default)"),
        max_steps: z.number().int().min(1).max(10_000).optional().describe('The most steps it may take (default 30)'),
        environment: z.string().optional().describe('browser (default), desktop, or an environment a worker hosts'),
        signin: z.string().optional().describe('A saved sign-in to start with (its cookies and storage)'),
        max_cost: z.number().positive().optional().describe("A budget for the model's cost in US dollars"),
        max_minutes: z.number().positive().optional().describe('A budget of working minutes'),
        output_schema: outputSchemaArg,
        wait_seconds: waitSecondsArg.optional().describe('Wait up to this many seconds (at most 60) before returning'),
      },
      annotations: { destructiveHint: false, openWorldHint: true },
    },
    (args, extra) =>
      guarded(async () => {
        const agent = await deps.client();
        const { id } = await agent.start(await newTaskFrom(deps, args), { policy: deps.policy });
        const snap = args.wait_seconds
          ? await waitWithProgress(deps, id, args.wait_seconds, extra)
          : await agent.status(id);
        return answer(await taskView(deps, snap));
      }),
  );

  server.registerTool(
    'get_task',
    {
      title: "A task's state",
      description:
        "Returns a task's state now: status, step, the pending question (its kind, and whether you may answer it), " +
        'the answer once it has ended, the end reason, its cost so far, what it waits for, links (Temporal UI, ' +
        'console, report) and what to do next.',
      inputSchema: { task_id: taskIdArg },
      annotations: { readOnlyHint: true },
    },
    ({ task_id }) =>
      guarded(async () => {
        const agent = await deps.client();
        return answer(await taskView(deps, await agent.status(task_id)));
      }),
  );

  server.registerTool(
    'wait_for_task',
    {
      title: 'Wait for a task',
      description:
        `Waits up to wait_seconds (at most ${MAX_WAIT_SECONDS}, default ${MAX_WAIT_SECONDS}) until the task ends, ` +
        'asks a question, or is paused; returns its state as get_task does. Call it again to wait longer. Sends ' +
        'progress notifications while it waits when the request carries a progress token.',
      inputSchema: {
        task_id: taskIdArg,
        wait_seconds: waitSecondsArg.optional().describe(`Seconds to wait at most (default ${MAX_WAIT_SECONDS})`),
      },
      annotations: { readOnlyHint: true },
    },
    ({ task_id, wait_seconds }, extra) =>
      guarded(async () => {
        const snap = await waitWithProgress(deps, task_id, wait_seconds ?? MAX_WAIT_SECONDS, extra);
        return answer(await taskView(deps, snap));
      }),
  );

  server.registerTool(
    'list_tasks',
    {
      title: 'List tasks',
      description:
        'Lists tasks, newest first: id, status, step, cost, start time, instruction, environment. Filter by status ' +
        '(e.g. waiting_for_user: the tasks that wait for an answer) and by text in the instruction or id.',
      inputSchema: {
        status: z.enum(TASK_STATES).optional().describe('Only tasks with this status'),
        text: z.string().optional().describe('Only tasks whose instruction or id contains this text'),
        limit: z.number().int().min(1).max(LIST_LIMIT).optional().describe('At most this many (default 20)'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ status, text, limit }) =>
      guarded(async () => {
        const agent = await deps.client();
        const wanted = limit ?? 20;
        const needle = text?.trim().toLowerCase() ?? '';
        const filter = { ...(status ? { status: status as TaskState } : {}) };
        const rows = needle
          ? (await agent.list({ ...filter, limit: 500 })).filter(
              (r) => r.instruction.toLowerCase().includes(needle) || r.id.toLowerCase().includes(needle),
            )
          : await agent.list({ ...filter, limit: wanted });
        return answer({ tasks: rows.slice(0, wanted) });
      }),
  );
}
