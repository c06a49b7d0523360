// The desktop's tools as a step's act carries them out: one checked call run in the sandbox (a command, keys, text,
// a click at explicit coordinates or where the grounding model finds a description), its result as text for the
// model to read.
import { isSessionLostType } from '../../src/agent/failure-types';
import type { TaskInput } from '../../src/contract/task';
import type { DesktopSession } from '../../src/desktop';
import { groundingMessages, NOT_IMPLEMENTED, parsePoint } from '../../src/desktop/agent';
import type { DesktopCall } from '../../src/desktop/agent';
import { toDataUrl } from '../../src/image/screenshot';
import { CALL_KIND_HEADER, ENTRY_INDEX_HEADER } from '../../src/scripted/server';
import type { TrajectoryWriter } from '../../src/trajectory/writer';
import type { ToolSubCallInput } from '../../src/trajectory/schema';
import { subCallRecord } from '../../src/agent/sub-calls';
import type { ActInput } from '../../src/contract/activities';
import { askDesktopModel, desktopModel } from './desktop-models';
import type { ActivityDeps } from '../support';

export interface ToolContext {
  deps: ActivityDeps;
  input: TaskInput;
  req: ActInput;
  w: TrajectoryWriter;
}

/**
 * A tool's text result; `point` is where a click-family call clicked and `subCalls` the model calls it made (the
 * grounding call), both kept in the tool_output's metadata.
 */
export type ToolResult = {
  output: string;
  error?: string;
  point?: { x: number; y: number };
  subCalls?: ToolSubCallInput[];
};

/** Carries out one checked call; its failure is the model's to read (an observation), unless the desktop is gone. */
export async function runTool(session: DesktopSession, call: DesktopCall, ctx: ToolContext): Promise<ToolResult> {
  if (!call.known || call.error) return { output: '', error: call.error ?? NOT_IMPLEMENTED };
  const a = call.arguments;
  try {
    switch (call.name) {
      case 'stop':
        return { output: typeof a.answer === 'string' ? a.answer : 'The task is done.' };
      case 'ask_user':
        return { output: `Asked the user: ${String(a.question)}` };
      case 'run_command': {
        const timeoutMs = typeof a.timeout === 'number' ? a.timeout * 1000 : undefined;
        const r = await session.runCommand(String(a.command), timeoutMs !== undefined ? { timeoutMs } : {});
        if (r.timedOut) {
          const secs = ((timeoutMs ?? ctx.deps.config.desktop.commandTimeoutSeconds * 1000) / 1000).toString();
          return {
            output: r.output,
            error: `The command did not finish within ${secs} s and was stopped. Use run_background_command for long-running programs, or give a larger timeout.${r.output ? ` Output so far:\n${r.output}` : ''}`,
          };
        }
        const body = r.output === '' ? '(no output)' : r.output;
        return r.exitCode === 0 ? { output: body } : { output: body, error: `exit code ${r.exitCode}: ${body}` };
      }
      case 'run_background_command': {
        const r = await session.runBackground(String(a.command));
        return { output: `Started in the background. Its output goes to ${r.logFile} (read it with run_command).` };
      }
      case 'send_key':
        await session.key(String(a.key));
        return { output: `Pressed ${String(a.key)}.` };
      case 'type_text':
        await session.type(String(a.text));
        return { output: 'The text has been typed.' };
      case 'click':
      case 'double_click':
      case 'right_click': {
        const subCalls: ToolSubCallInput[] = [];
        const point = await pointOf(session, a, ctx, subCalls);
        const made = subCalls.length > 0 ? { subCalls } : {};
        if ('error' in point) return { output: '', error: point.error, ...made };
        if (call.name === 'click') await session.click(point.x, point.y);
        else if (call.name === 'double_click') await session.doubleClick(point.x, point.y);
        else await session.rightClick(point.x, point.y);
        const what = typeof a.query === 'string' ? ` (${a.query})` : '';
        const verb =
          call.name === 'click' ? 'Clicked' : call.name === 'double_click' ? 'Double-clicked' : 'Right-clicked';
        return { output: `${verb} at (${point.x}, ${point.y})${what}.`, point, ...made };
      }
      case 'drag':
        await session.drag(Number(a.from_x), Number(a.from_y), Number(a.to_x), Number(a.to_y));
        return { output: `Dragged from (${a.from_x}, ${a.from_y}) to (${a.to_x}, ${a.to_y}).` };
      default:
        return { output: '', error: `The tool ${call.name} is not available on the desktop.` };
    }
  } catch (err) {
    if (err instanceof Error && isSessionLostType(err.name)) throw err;
    const text = err instanceof Error ? err.message : String(err);
    return { output: '', error: `${call.name} failed: ${text.split('\n')[0]}` };
  }
}

/**
 * Explicit coordinates, or the point a grounding model finds for the description on a fresh screenshot (that call
 * added to `subCalls`).
 */
async function pointOf(
  session: DesktopSession,
  a: Record<string, unknown>,
  ctx: ToolContext,
  subCalls: ToolSubCallInput[],
): Promise<{ x: number; y: number } | { error: string }> {
  if (typeof a.x === 'number' && typeof a.y === 'number') return { x: a.x, y: a.y };
  const query = String(a.query ?? '');
  const d = ctx.deps.config.desktop;
  const model = desktopModel(ctx.deps.config, ctx.input, d.groundingEndpoint ?? d.visionEndpoint);
  const png = await session.screenshot();
  const messages = groundingMessages({
    screenshotDataUrl: toDataUrl(png, 'image/png'),
    query,
    width: session.width,
    height: session.height,
  });
  const started = Date.now();
  const { completion } = await askDesktopModel(model, messages, {
    [ENTRY_INDEX_HEADER]: String(ctx.req.step - 1),
    [CALL_KIND_HEADER]: 'ground',
  });
  const durationMs = Date.now() - started;
  subCalls.push(subCallRecord('ground', { model: model.client.endpoint.model, messages, durationMs, completion }));
  const point = parsePoint(completion.text, { width: session.width, height: session.height });
  if ('error' in point) return { error: `Could not find "${query}" on the screen: ${point.error}` };
  return point;
}
