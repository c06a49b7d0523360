// The MCP tools for schedules: create_schedule, list_schedules, describe_schedule, delete_schedule. A schedule runs
// the task start_task would start (the same arguments) on a cron or an interval; `notify_when` makes a monitor that
// tells the workers' webhook when the output changes or a condition becomes true. Each is one call of the typed client.
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ScheduleOptionsIn } from '../client/client';
import { OVERLAP_POLICIES } from '../client/schedules';
import type { OverlapPolicy } from '../client/schedules';
import { notifyWhenOf } from '../src/contract/condition-logic';
import { SCHEDULE_NAME } from '../src/contract/task';
import { answer, guarded, outputSchemaArg } from './deps';
import type { McpDeps } from './deps';
import { newTaskFrom } from './start';

const nameArg = z
  .string()
  .regex(SCHEDULE_NAME, 'a schedule name: letters, digits, dot, dash, underscore (max 64)')
  .describe("The schedule's name (its runs are tasks named <name>-<scheduled time>)");

export function registerScheduleTools(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'create_schedule',
    {
      title: 'Run a task on a schedule',
      description:
        'Creates a schedule that starts the same task (as start_task would) on a cron expression (with a time zone) ' +
        'or every interval (e.g. 6h). Each run is an ordinary task with id <name>-<scheduled time>. With notify_when ' +
        "(`changed`, an expression such as `output.price < 100`, or a JSON-logic object as JSON text) the workers' " +
        'webhook is told when the output changes, or when the condition becomes true. Refuses a bad cron, time zone, ' +
        'URL or condition in one line. Returns the schedule with its next runs.',
      inputSchema: {
        name: nameArg,
        instruction: z.string().describe('What each run does, in plain words'),
        start_url: z.string().optional().describe('The first page to open'),
        model: z.string().optional().describe("The model endpoint's name in the server's config (default: default)"),
        max_steps: z.number().int().min(1).max(10_000).optional(),
        signin: z.string().optional().describe('A saved sign-in each run starts with (its cookies and storage)'),
        max_cost: z.number().positive().optional().describe("Each run's budget for the model's cost in US dollars"),
        max_minutes: z.number().positive().optional().describe("Each run's budget of working minutes"),
        output_schema: outputSchemaArg,
        cron: z.string().optional().describe('A cron expression, e.g. "0 9 * * 1-5" (give cron or every)'),
        timezone: z.string().optional().describe("The cron's IANA time zone, e.g. Europe/Lisbon (default UTC)"),
        every: z.string().optional().describe('An interval, e.g. 6h or 30m (give cron or every)'),
        overlap: z
          .enum(OVERLAP_POLICIES as [string, ...string[]])
          .optional()
          .describe('Default skip'),
        notify_when: z.string().optional().describe('changed, an expression over output, or JSON logic'),
      },
      annotations: { destructiveHint: false, openWorldHint: true },
    },
    (args) =>
      guarded(async () => {
        const task = await newTaskFrom(deps, args);
        const opts: ScheduleOptionsIn = {
          ...(args.cron !== undefined ? { cron: args.cron } : {}),
          ...(args.every !== undefined ? { every: args.every } : {}),
          ...(args.timezone !== undefined ? { timezone: args.timezone } : {}),
          ...(args.overlap !== undefined ? { overlap: args.overlap as OverlapPolicy } : {}),
          ...(args.notify_when !== undefined ? { notifyWhen: notifyWhenOf(args.notify_when) } : {}),
        };
        const agent = await deps.client();
        return answer({ ...(await agent.createSchedule(args.name, task, opts, { policy: deps.policy })) });
      }),
  );

  server.registerTool(
    'list_schedules',
    {
      title: 'Schedules',
      description: 'Lists the schedules that run tasks: name, paused or not, timing, next run, instruction.',
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    () => guarded(async () => answer({ schedules: await (await deps.client()).listSchedules() })),
  );

  server.registerTool(
    'describe_schedule',
    {
      title: 'A schedule, its next and last runs',
      description:
        "A schedule's timing and policies, its next runs, its last 5 runs with their state, answer and output, and " +
        "its monitor's memory (the last value, the notifications sent).",
      inputSchema: { name: nameArg },
      annotations: { readOnlyHint: true },
    },
    (args) => guarded(async () => answer({ ...(await (await deps.client()).describeSchedule(args.name)) })),
  );

  server.registerTool(
    'delete_schedule',
    {
      title: 'Delete a schedule',
      description: 'Deletes a schedule and stops its monitor; runs under way go on, and finished runs are kept.',
      inputSchema: { name: nameArg },
      annotations: { destructiveHint: true },
    },
    (args) =>
      guarded(async () => {
        await (await deps.client()).deleteSchedule(args.name);
        return answer({ name: args.name, deleted: true });
      }),
  );
}
