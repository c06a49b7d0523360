// The desktop environment's room in the session activities: open a sandboxed desktop for a run (its home is the
// run's `home/` folder, so a new worker finds the files again), screenshot it before a turn, carry out one tool call
// of a turn (each its own action and tool_output event; the turn's last call also records the post screenshot),
// and close it. session.ts routes here for desktop tasks; the workflow does not know which room it talks to.
import fs from 'node:fs/promises';
import path from 'node:path';
import { agentState } from '../src/agent/decision';
import { isSessionLostType } from '../src/agent/failure-types';
import { TEXT_OBSERVATION_KEY } from '../src/agent/history';
import { describeUrlPolicy } from '../src/policy/url-policy';
import { DEFAULT_DESKTOP_SCREEN } from '../src/contract/task';
import type { TaskInput } from '../src/contract/task';
import type { DesktopPool, DesktopSession } from '../src/desktop';
import { checkCall, DESKTOP_TOOL_NAMES, groundingMessages, parsePoint, summarizeCall } from '../src/desktop/agent';
import type { DesktopCall } from '../src/desktop/agent';
import { toDataUrl } from '../src/image/screenshot';
import { CALL_KIND_HEADER, ENTRY_INDEX_HEADER } from '../src/scripted/server';
import { actionEvent, postObservation, preObservation, sessionRestored, toolOutput } from '../src/trajectory/events';
import { eventId } from '../src/trajectory/ids';
import type { Event } from '../src/trajectory/schema';
import type { TrajectoryWriter } from '../src/trajectory/writer';
import { callModel, endpointFor, recordedPre, taskUrlPolicy, nonRetryable, withHeartbeat } from './support';
import { restoreHome, saveHome } from './local-files';
import { recordStartPage } from './step-records';
import type { ActivityDeps, RunFiles } from './support';
import type {
  ActInput,
  ActResult,
  ObserveResult,
  OpenSessionInput,
  ReleaseInput,
  StepRef,
} from '../src/contract/activities';

/** The run folder's subfolder that is the sandbox's home directory. */
export const HOME_DIR = 'home';
/** Desktop session ids start so (session.ts routes observe/act/release by it). */
export const DESKTOP_SESSION_PREFIX = 'desk-';

/** The desktop agent in `agent_state`: its tools; it keeps no memorised facts. */
export const DESKTOP_AGENT = { name: 'desktop', allowedActions: DESKTOP_TOOL_NAMES };

export function desktopScreen(input: TaskInput): { width: number; height: number } {
  return input.screen ?? DEFAULT_DESKTOP_SCREEN;
}

/** The one line the model (and the viewer) reads where a browser step has a URL: the desktop's windows. */
async function windowsLine(session: DesktopSession): Promise<string> {
  const windows = await session.windows().catch(() => []);
  const titles = windows.map((w) => w.title || '(untitled)');
  return titles.length > 0 ? `Windows: ${titles.join(' | ')}` : 'No windows are open.';
}

function pool(deps: ActivityDeps): DesktopPool {
  if (!deps.desktops) {
    nonRetryable(
      new Error('this worker has no desktop support (its log says why at start; see README: The desktop agent)'),
      'DesktopUnavailableError',
    );
  }
  return deps.desktops;
}

export function createDesktopRoom(deps: ActivityDeps, files: RunFiles) {
  const d = deps.config.desktop;
  return {
    async open(
      req: OpenSessionInput,
      input: TaskInput,
    ): Promise<{ sessionId: string; taskQueue: string; url: string }> {
      const desktops = pool(deps);
      const w = await files.writer(req.runId);
      const homeDir = path.join(files.dir(req.runId), HOME_DIR);
      await fs.mkdir(homeDir, { recursive: true, mode: 0o700 });
      // With a shared store (S3), the home as the last turn left it, whichever worker ran that turn.
      await restoreHome(files, req.runId, homeDir);
      const screen = desktopScreen(input);
      const urlPolicy = taskUrlPolicy(deps.config, input);
      // Owned by the run: a desktop it still holds here (left by a lost activity) is closed first.
      const { sessionId } = await desktops.open(
        {
          homeDir,
          width: screen.width,
          height: screen.height,
          network: d.network,
          urlPolicy,
          apps: d.apps,
          typingChunk: d.typingChunk,
          typingDelayMs: d.typingDelayMs,
          commandTimeoutMs: d.commandTimeoutSeconds * 1000,
          maxCommandTimeoutMs: d.maxCommandTimeoutSeconds * 1000,
          outputHeadChars: d.outputHeadChars,
          outputTailChars: d.outputTailChars,
          ...(deps.log ? { log: deps.log } : {}),
        },
        { owner: req.runId },
      );
      if (req.reason !== 'start') {
        const why =
          req.reason === 'worker_lost'
            ? 'The desktop was lost (its worker stopped) and a new one was started'
            : 'A new desktop was started after the pause';
        await w.appendEvent(
          sessionRestored(
            req.step,
            `${why}: windows and background processes from before are gone; the files in your home directory are kept.`,
            { generation: req.generation, metadata: { note: 'session_restored', environment: 'desktop' } },
          ),
        );
      }
      const network =
        d.network === 'policy' ? `via proxy, URL policy: ${describeUrlPolicy(urlPolicy)}` : d.network ? 'host' : 'off';
      deps.log?.(
        `desktop ${sessionId} opened for ${req.runId} (${req.reason}, generation ${req.generation}; ` +
          `${screen.width}×${screen.height}, network ${network})`,
      );
      return { sessionId, taskQueue: deps.sessionQueue, url: '' };
    },

    async release(req: ReleaseInput): Promise<void> {
      const desktops = pool(deps);
      if (desktops.has(req.sessionId)) await desktops.close(req.sessionId);
      await saveHome(files, req.runId, path.join(files.dir(req.runId), HOME_DIR));
    },

    async observe(req: StepRef & { sessionId: string }): Promise<ObserveResult> {
      const w = await files.writer(req.runId);
      const session = pool(deps).get(req.sessionId);
      return withHeartbeat(async () => {
        const recorded = await recordedPre(w, req);
        if (recorded) return recorded;
        await deps.checkpoint?.('observe', req);
        const png = await session.screenshot();
        const pageInfo = await windowsLine(session);
        if (req.step === 1) await recordStartPage(w, { png, url: '', pageInfo });
        const screenshot = await w.saveScreenshot(req.step, 'pre', png, req.generation);
        await w.appendEvent(
          preObservation(
            req.step,
            { screenshot_path: screenshot, url: '', page_info: pageInfo },
            { generation: req.generation },
          ),
        );
        return { url: '', screenshot, captchaTimedOut: false };
      });
    },

    /** One tool call of the turn: recorded as its action (calls after the first) and its tool_output, exactly once. */
    async act(req: ActInput): Promise<ActResult> {
      const w = await files.writer(req.runId);
      const input = await files.input(req.runId);
      const k = req.call ?? 0;
      const stamp = { generation: req.generation, call: k };
      const ids = {
        action: eventId({ step: req.step, kind: 'action', ...stamp }),
        tool: eventId({ step: req.step, kind: 'tool', ...stamp }),
        post: eventId({ step: req.step, kind: 'post', generation: req.generation }),
      };
      const { action: rawName, ...rawArgs } = req.action;
      const call = checkCall(String(rawName), rawArgs);
      const events = await w.events();
      const recorded = events.find((e) => e.id === ids.tool);
      let output =
        recorded?.type === 'observation' && recorded.observation_type === 'tool_output' ? recorded : undefined;
      const session = pool(deps).get(req.sessionId);
      if (!output) {
        if (k > 0 && !events.some((e) => e.id === ids.action)) {
          await w.appendEvent(actionEvent(req.step, callFields(call), stamp));
        }
        const result = await withHeartbeat(() => runTool(session, call, { deps, input, req, w }));
        await withHeartbeat(async () => deps.checkpoint?.('act', req));
        output = toolOutput(
          req.step,
          ids.action,
          { output: result.output, ...(result.error ? { error: result.error } : {}) },
          {
            ...stamp,
            metadata: {
              [TEXT_OBSERVATION_KEY]: observationText(result),
              ...(result.point ? { point: result.point } : {}),
            },
          },
        );
        await w.appendEvent(output);
      }
      if (req.final && !events.some((e) => e.id === ids.post)) {
        // The turn's files, into a shared store before the turn counts as done (its post observation).
        await withHeartbeat(() => saveHome(files, req.runId, path.join(files.dir(req.runId), HOME_DIR)));
        await withHeartbeat(async () => {
          const shot = await w.saveScreenshot(req.step, 'post', await session.screenshot(), req.generation);
          await w.appendEvent(
            postObservation(
              req.step,
              ids.action,
              { screenshot_path: shot, url: '', page_info: await windowsLine(session) },
              { generation: req.generation },
            ),
          );
        });
      }
      return {
        url: '',
        textObservation: observationText(output),
        error: output.error || null,
      };
    },
  };
}

/** What the model reads back for a call: its output, or its error. */
function observationText(result: { output: string; error?: string }): string {
  return result.error ? `Error: ${result.error}` : result.output;
}

/** The action event of a turn's second or later call (the first was recorded by decide with the model's reply). */
function callFields(call: DesktopCall) {
  return {
    action_name: call.name,
    content: { action: call.name, arguments: call.arguments },
    action_nl_description: summarizeCall(call),
    agent_state: agentState(DESKTOP_AGENT, []),
    llm_conversation: { messages: [] },
    grounding: null,
  };
}

interface ToolContext {
  deps: ActivityDeps;
  input: TaskInput;
  req: ActInput;
  w: TrajectoryWriter;
}

/** A tool's text result; `point` is where a click-family call clicked (kept in the tool_output's metadata). */
type ToolResult = { output: string; error?: string; point?: { x: number; y: number } };

/** Carries out one checked call; its failure is the model's to read (an observation), unless the desktop is gone. */
async function runTool(session: DesktopSession, call: DesktopCall, ctx: ToolContext): Promise<ToolResult> {
  if (!call.known || call.error) return { output: '', error: call.error ?? `Unknown tool ${call.name}.` };
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
        const point = await pointOf(session, a, ctx);
        if ('error' in point) return { output: '', error: point.error };
        if (call.name === 'click') await session.click(point.x, point.y);
        else if (call.name === 'double_click') await session.doubleClick(point.x, point.y);
        else await session.rightClick(point.x, point.y);
        const what = typeof a.query === 'string' ? ` (${a.query})` : '';
        const verb =
          call.name === 'click' ? 'Clicked' : call.name === 'double_click' ? 'Double-clicked' : 'Right-clicked';
        return { output: `${verb} at (${point.x}, ${point.y})${what}.`, point };
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

/** Explicit coordinates, or the point a grounding model finds for the description on a fresh screenshot. */
async function pointOf(
  session: DesktopSession,
  a: Record<string, unknown>,
  ctx: ToolContext,
): Promise<{ x: number; y: number } | { error: string }> {
  if (typeof a.x === 'number' && typeof a.y === 'number') return { x: a.x, y: a.y };
  const query = String(a.query ?? '');
  const d = ctx.deps.config.desktop;
  const client = endpointFor(ctx.deps.config, ctx.input, d.groundingEndpoint ?? d.visionEndpoint);
  const png = await session.screenshot();
  const messages = groundingMessages({
    screenshotDataUrl: toDataUrl(png, 'image/png'),
    query,
    width: session.width,
    height: session.height,
  });
  const completion = await callModel(client, messages, {
    [ENTRY_INDEX_HEADER]: String(ctx.req.step - 1),
    [CALL_KIND_HEADER]: 'ground',
  });
  const point = parsePoint(completion.text, { width: session.width, height: session.height });
  if ('error' in point) return { error: `Could not find "${query}" on the screen: ${point.error}` };
  return point;
}

/** The first action of a turn as recorded (decide wrote it), or undefined. */
export function turnStart(events: readonly Event[], req: StepRef): Extract<Event, { type: 'action' }> | undefined {
  const id = eventId({ step: req.step, kind: 'action', generation: req.generation });
  return events.find((e): e is Extract<Event, { type: 'action' }> => e.id === id && e.type === 'action');
}
