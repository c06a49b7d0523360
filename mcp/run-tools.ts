// The MCP tools that read a task's run: get_screenshot (the latest screenshot, or step N's, as image content scaled to
// a long edge of at most 1280 px) and get_steps (a compact step table from the typed client). A screenshot is read
// only by a name the run's own events give, under the task's id in the run store.
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AgentClient } from '../client/client';
import { fitLongEdge } from '../src/image/fit';
import { parseEventId } from '../src/trajectory/ids';
import { loadEvents } from '../src/trajectory/reader';
import type { Event } from '../src/trajectory/schema';
import { answer, guarded, McpRefusal, taskIdArg } from './deps';
import type { McpDeps } from './deps';

/** The long edge of a screenshot a tool returns: enough to read a page, small enough for a model's context. */
export const SCREENSHOT_LONG_EDGE = 1280;

/** The screenshots the run's events name, in order, with their step numbers. */
export function screenshotsInOrder(events: readonly Event[]): { step: number; file: string }[] {
  const out: { step: number; file: string }[] = [];
  for (const e of events) {
    if (e.type !== 'observation' || e.observation_type !== 'environment' || !e.screenshot_path) continue;
    const step = parseEventId(e.id)?.step;
    if (step !== undefined) out.push({ step, file: e.screenshot_path });
  }
  return out;
}

/** The screenshot the model saw at `step` (its first of that step), or the newest one. */
function pick(shots: { step: number; file: string }[], id: string, step: number | undefined) {
  if (step === undefined) {
    const last = shots.at(-1);
    if (!last) throw new McpRefusal(`task ${id} has no screenshot yet`);
    return last;
  }
  const found = shots.find((s) => s.step === step);
  if (!found) {
    const steps = [...new Set(shots.map((s) => s.step))];
    const have = steps.length ? `it has steps ${steps[0]}…${steps.at(-1)}` : 'it has none yet';
    throw new McpRefusal(`task ${id} has no screenshot of step ${step} (${have})`);
  }
  return found;
}

/** The compact step table of get_steps and the steps resource: one row per decision. */
export async function stepTable(agent: AgentClient, id: string): Promise<Record<string, unknown>> {
  const steps = await agent.steps(id);
  return {
    task_id: id,
    steps: steps.map((s) => ({
      step: s.step,
      action: s.action,
      summary: s.summary,
      url: s.url,
      ...(s.superseded ? { superseded: true } : {}),
      ...(s.invalid ? { invalid: s.invalid } : {}),
    })),
  };
}

export function registerRunTools(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'get_screenshot',
    {
      title: "A task's screenshot",
      description:
        `Returns the task's latest screenshot, or the one its model saw at step N, as an image (the long edge at most ` +
        `${SCREENSHOT_LONG_EDGE} px), with a line saying which step and page it is.`,
      inputSchema: {
        task_id: taskIdArg,
        step: z.number().int().min(0).optional().describe('The step (default: the latest screenshot)'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ task_id, step }) =>
      guarded(async () => {
        const agent = await deps.client();
        await agent.status(task_id); // an unknown id is refused in the client's words
        const events = await loadEvents(deps.store(), task_id).catch(() => [] as Event[]);
        const shot = pick(screenshotsInOrder(events), task_id, step);
        const bytes = await deps.store().readBytes(`${task_id}/${shot.file}`);
        if (!bytes) throw new McpRefusal(`task ${task_id}: screenshot ${shot.file} is missing from its run folder`);
        const image = await fitLongEdge(bytes, SCREENSHOT_LONG_EDGE);
        return {
          content: [
            { type: 'text', text: `task ${task_id}, step ${shot.step} (${shot.file}, ${image.width}×${image.height})` },
            { type: 'image', data: image.data.toString('base64'), mimeType: image.mime },
          ],
        };
      }),
  );

  server.registerTool(
    'get_steps',
    {
      title: "A task's steps",
      description:
        'Returns the steps so far as a compact table, one row per decision: step, action, a one-line summary, the ' +
        "page's URL; a decision re-made after a lost worker or an invalid model output is marked.",
      inputSchema: { task_id: taskIdArg },
      annotations: { readOnlyHint: true },
    },
    ({ task_id }) => guarded(async () => answer(await stepTable(await deps.client(), task_id))),
  );
}
