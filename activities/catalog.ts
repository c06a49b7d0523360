// The activities: thin shells over src/ that read and write the run folder and drive this worker's browsers.
// Built by createActivities(deps) so tests and the worker inject the pool, the config and the queue name.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { getProfile } from '../src/actions/profiles';
import type { AgentAction } from '../src/actions/schemas';
import { describeAction } from '../src/actions/describe';
import { dispatchAction } from '../src/agent/dispatch';
import { historyForStep, lastUrl, memorizedFacts, TEXT_OBSERVATION_KEY } from '../src/agent/history';
import { summarizeAction } from '../src/agent/summary';
import type { BrowserPool } from '../src/browser/pool';
import { resizedPixelsSpace, NORM1000 } from '../src/coords/viewport';
import { resizeScreenshot, toDataUrl } from '../src/image/screenshot';
import { smartResize } from '../src/image/smart-resize';
import { ModelClient, ModelRequestError } from '../src/model/client';
import type { ChatMessage } from '../src/model/client';
import { buildChatMessages } from '../src/model/context';
import { ModelOutputError } from '../src/model/errors';
import { parseModelOutput } from '../src/model/parse';
import { buildSystemPrompt } from '../src/model/prompt';
import { SUBCALL_INDEX_HEADER } from '../src/scripted/server';
import {
  actionEvent,
  postObservation,
  preObservation,
  sessionRestored,
  taskMessage,
  toolOutput,
  userReply,
} from '../src/trajectory/events';
import { eventId } from '../src/trajectory/ids';
import type { Event } from '../src/trajectory/schema';
import { TrajectoryWriter } from '../src/trajectory/writer';
import type { Config } from '../worker/config';
import type { TaskInput } from '../workflows/contract';
import type {
  ActResult,
  DecideResult,
  FinalizeInput,
  ObserveResult,
  OpenSessionInput,
  RecordReplyInput,
  ReleaseInput,
  StepRef,
} from './types';

export interface ActivityDeps {
  config: Config;
  pool: BrowserPool;
  /** This worker process's own task queue (session-pinned activities go there). */
  sessionQueue: string;
  log?: (line: string) => void;
  /**
   * Test hook (fault injection): awaited at named points of a step, e.g. to hold an activity there while a test
   * kills the worker. `observe` (before the screenshot), `decide` (before the model call), `act` (after the action
   * ran in the browser, before it is recorded).
   */
  checkpoint?: (point: 'observe' | 'decide' | 'act', req: StepRef) => Promise<void>;
}

const STORAGE_STATE_FILE = 'browser_state.json';

/** Calls heartbeat every second while `work` runs, so a slow page or model is not taken for a dead worker. */
async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  let ctx: Context | undefined;
  try {
    ctx = Context.current();
  } catch {
    ctx = undefined; // called outside an activity (unit tests)
  }
  const timer = ctx ? setInterval(() => ctx?.heartbeat(), 1000) : undefined;
  try {
    ctx?.heartbeat();
    return await work();
  } finally {
    if (timer) clearInterval(timer);
  }
}

function nonRetryable(err: unknown, type?: string): never {
  const e = err instanceof Error ? err : new Error(String(err));
  throw ApplicationFailure.create({ message: e.message, type: type ?? e.name, nonRetryable: true, cause: e });
}

export function createActivities(deps: ActivityDeps) {
  const { config, pool, sessionQueue } = deps;
  const writers = new Map<string, Promise<TrajectoryWriter>>();

  const writer = (runId: string): Promise<TrajectoryWriter> => {
    let w = writers.get(runId);
    if (!w) {
      w = TrajectoryWriter.open(config.runsDir, runId);
      w.catch(() => writers.delete(runId));
      writers.set(runId, w);
      if (writers.size > 256) writers.delete(writers.keys().next().value as string);
    }
    return w;
  };
  const runDir = (runId: string) => path.join(config.runsDir, runId);
  const taskInput = async (runId: string): Promise<TaskInput> => {
    const state = await (await writer(runId)).readRunState();
    return state.input as TaskInput;
  };
  const screen = (input: TaskInput) => {
    const profile = getProfile(input.profile);
    const { width, height } = smartResize(input.viewport.height, input.viewport.width, {
      factor: profile.resizeFactor,
    });
    return { profile, resized: { width, height } };
  };
  const endpointFor = (input: TaskInput) => {
    const base = config.models[input.model.endpoint];
    const baseUrl = input.model.baseUrl ?? base?.baseUrl;
    const model = input.model.model ?? base?.model;
    if (!baseUrl || !model) {
      throw ApplicationFailure.create({
        message: `no model endpoint '${input.model.endpoint}' configured: set CUA_MODEL_BASE_URL and CUA_MODEL, the worker config's models.${input.model.endpoint}, or pass --model-base-url/--model`,
        type: 'ModelRequestError',
        nonRetryable: true,
      });
    }
    return new ModelClient({ ...base, baseUrl, model, apiKey: base?.apiKey });
  };
  const callModel = async (client: ModelClient, messages: ChatMessage[], headers?: Record<string, string>) => {
    try {
      return await withHeartbeat(() => client.complete(messages, { headers, signal: currentSignal() }));
    } catch (err) {
      if (err instanceof ModelRequestError) nonRetryable(err);
      throw err;
    }
  };

  return {
    /** Creates (or, on a retry, reopens) the run folder and records the task. */
    async startRun(input: TaskInput): Promise<void> {
      const { writer: w } = await TrajectoryWriter.openOrCreate(config.runsDir, input.runId, {
        task_id: input.runId,
        instruction: input.instruction,
        environment_config: { start_url: input.startUrl ?? null, viewport: input.viewport },
        metadata: { profile: input.profile },
      });
      writers.set(input.runId, Promise.resolve(w));
      const state = await w.readRunState();
      if (!state.input) await w.writeRunState({ ...state, input });
      await w.appendEvent(taskMessage(input.instruction));
    },

    /** Opens a browser session in this worker's pool; returns the queue its observe/act must go to. */
    async openSession(req: OpenSessionInput): Promise<{ sessionId: string; taskQueue: string; url: string }> {
      const input = await taskInput(req.runId);
      const w = await writer(req.runId);
      let url = input.startUrl;
      let storageState: string | undefined;
      if (req.restore) {
        const saved = path.join(runDir(req.runId), STORAGE_STATE_FILE);
        storageState = (await fs.stat(saved).catch(() => null)) ? saved : undefined;
        const state = await w.readRunState();
        url = (state.url as string | undefined) ?? lastUrl(await w.events()) ?? input.startUrl;
      }
      const session = await pool.openSession({
        viewport: input.viewport,
        downloadsDir: path.join(runDir(req.runId), 'downloads'),
        ...(storageState ? { storageState } : {}),
        ...(url ? { url } : {}),
      });
      if (req.reason === 'worker_lost') {
        await w.appendEvent(
          sessionRestored(req.step, `The browser session was lost and restored at ${url ?? 'a blank page'}.`, {
            generation: req.generation,
            metadata: { note: 'session_restored', restored_url: url ?? null },
          }),
        );
      }
      deps.log?.(`session ${session.sessionId} opened for ${req.runId} (${req.reason}, generation ${req.generation})`);
      return { sessionId: session.sessionId, taskQueue: sessionQueue, url: session.env.url() };
    },

    /** Saves storage state + URL (when asked) and closes the session. */
    async releaseSession(req: ReleaseInput): Promise<void> {
      if (!pool.has(req.sessionId)) return;
      if (req.save) {
        const env = pool.get(req.sessionId);
        await env.saveStorageState(path.join(runDir(req.runId), STORAGE_STATE_FILE));
        const w = await writer(req.runId);
        await w.writeRunState({ ...(await w.readRunState()), url: env.url() });
      }
      await pool.close(req.sessionId);
    },

    /** Pre screenshot, URL and page context of a step. */
    async observe(req: StepRef & { sessionId: string; captchaWaitMs?: number }): Promise<ObserveResult> {
      const w = await writer(req.runId);
      const id = eventId({ step: req.step, kind: 'pre', generation: req.generation });
      const env = pool.get(req.sessionId);
      return withHeartbeat(async () => {
        const existing = (await w.hasEvent(id)) ? (await w.events()).find((e) => e.id === id) : undefined;
        if (existing && existing.type === 'observation' && existing.observation_type === 'environment') {
          return { url: existing.url ?? '', screenshot: existing.screenshot_path ?? '', captchaTimedOut: false };
        }
        await deps.checkpoint?.('observe', req);
        // The captcha gate: open at once unless a remote browser announced a solve in progress.
        const captchaTimedOut = req.captchaWaitMs ? !(await env.waitForCaptcha(req.captchaWaitMs)) : false;
        const png = await env.screenshot();
        const screenshot = await w.saveScreenshot(req.step, 'pre', png, req.generation);
        const url = env.url();
        const pageInfo = await env.pageContext();
        await w.appendEvent(
          preObservation(
            req.step,
            { screenshot_path: screenshot, url, page_info: pageInfo },
            { generation: req.generation },
          ),
        );
        return { url, screenshot, captchaTimedOut };
      });
    },

    /** The model call: rebuild the chat from the run folder, ask the model, parse, record the action. */
    async decide(req: StepRef): Promise<DecideResult> {
      const w = await writer(req.runId);
      const input = await taskInput(req.runId);
      const { profile, resized } = screen(input);
      const actionId = eventId({ step: req.step, kind: 'action', generation: req.generation });
      const events = await w.events();
      const recorded = events.find((e): e is Extract<Event, { type: 'action' }> => e.id === actionId);
      if (recorded) {
        // A retry after the action was recorded: answer from the record, never ask the model again.
        const { thoughts: _t, ...recordedArgs } = recorded.content.arguments as Record<string, unknown>;
        const action = profile.actionSchema.parse({ action: recorded.content.action, ...recordedArgs });
        const decision = decisionOf(action, recorded.content.arguments);
        if (decision.kind !== 'act') await recordStopStep(w, req, decision);
        return decision;
      }

      const systemPrompt = buildSystemPrompt({ profile, screen: resized });
      const messages = await buildChatMessages(historyForStep(events, req.step, req.generation), {
        systemPrompt,
        maxImages: input.imagesKept,
        loadImage: async (ref) => {
          const shot = await resizeScreenshot(
            await fs.readFile(path.join(runDir(req.runId), ref)),
            profile.resizeFactor,
          );
          return toDataUrl(shot.data, shot.mime);
        },
      });
      await withHeartbeat(async () => deps.checkpoint?.('decide', req));
      const completion = await callModel(endpointFor(input), messages as ChatMessage[]);
      let parsed;
      try {
        parsed = parseModelOutput(completion.text, profile, { terminateOnParseError: input.terminateOnParseError });
      } catch (err) {
        if (err instanceof ModelOutputError) nonRetryable(err, 'ModelOutputError');
        throw err;
      }
      const action = parsed.action;
      const { thoughts: _t, ...args } = action as AgentAction & { thoughts?: string };
      await w.appendEvent(
        actionEvent(
          req.step,
          {
            action_name: action.action,
            content: { action: action.action, arguments: { ...args, thoughts: parsed.thoughts } },
            action_nl_description: `${parsed.thoughts}\n${describeAction(action)}`.trim(),
            agent_state: {
              agent: `durable-cua/${profile.name}`,
              tools_available: [...profile.allowedActions],
              plan: [],
              facts: memorizedFacts(events),
            },
            llm_conversation: {
              messages: [
                {
                  raw_response: completion.text,
                  reasoning: completion.reasoning ?? '',
                  finish_reason: completion.finishReason ?? '',
                  usage: completion.usage,
                },
              ],
            },
            grounding: null,
          },
          {
            generation: req.generation,
            metadata: parsed.recoveredBy ? { recovered_by: parsed.recoveredBy, parse_error: parsed.parseError } : {},
          },
        ),
      );
      const decision = decisionOf(action, { ...args, thoughts: parsed.thoughts });
      if (decision.kind !== 'act') await recordStopStep(w, req, decision);
      return decision;
    },

    /** Carries out the decided action in this worker's browser; records tool output and the post screenshot. */
    async act(req: StepRef & { sessionId: string; action: Record<string, unknown> }): Promise<ActResult> {
      const w = await writer(req.runId);
      const input = await taskInput(req.runId);
      const { profile, resized } = screen(input);
      const parsed = profile.actionSchema.safeParse(req.action);
      if (!parsed.success)
        nonRetryable(new Error(`act got an invalid ${String(req.action.action)} action`), 'InvalidAction');
      const action = parsed.data;
      const actionId = eventId({ step: req.step, kind: 'action', generation: req.generation });
      const postId = eventId({ step: req.step, kind: 'post', generation: req.generation });
      const toolId = eventId({ step: req.step, kind: 'tool', generation: req.generation });
      if (await w.hasEvent(postId)) {
        const events = await w.events();
        const tool = events.find((e) => e.id === toolId);
        const post = events.find((e) => e.id === postId);
        const text = (tool?.metadata as Record<string, unknown> | undefined)?.[TEXT_OBSERVATION_KEY];
        return {
          url: post?.type === 'observation' && post.observation_type === 'environment' ? (post.url ?? '') : '',
          textObservation: typeof text === 'string' ? text : null,
          error: tool?.type === 'observation' && tool.observation_type === 'tool_output' ? tool.error || null : null,
        };
      }
      const env = pool.get(req.sessionId);
      const client = action.action === 'read_page_answer_question' ? endpointFor(input) : undefined;
      const result = await withHeartbeat(() =>
        dispatchAction(action, {
          target: env,
          space: profile.coordinateSpace === 'norm1000' ? NORM1000 : resizedPixelsSpace(resized.width, resized.height),
          viewport: input.viewport,
          answerFromPage: async (question, pageText) => {
            if (!client) return '';
            const completion = await callModel(client, pageQuestionMessages(question, pageText), {
              [SUBCALL_INDEX_HEADER]: String(req.step - 1),
            });
            return completion.text.trim();
          },
        }),
      );
      await withHeartbeat(async () => deps.checkpoint?.('act', req));
      await w.appendEvent(
        toolOutput(
          req.step,
          actionId,
          { output: result.output, error: result.error ?? '' },
          {
            generation: req.generation,
            metadata: result.textObservation ? { [TEXT_OBSERVATION_KEY]: result.textObservation } : {},
          },
        ),
      );
      return withHeartbeat(async () => {
        const png = await env.screenshot();
        const shot = await w.saveScreenshot(req.step, 'post', png, req.generation);
        const url = env.url();
        await w.appendEvent(
          postObservation(
            req.step,
            actionId,
            { screenshot_path: shot, url, page_info: await env.pageContext() },
            { generation: req.generation },
          ),
        );
        return { url, textObservation: result.textObservation, error: result.error };
      });
    },

    /** Marks the run as waiting for the user and writes a data_point.json snapshot (a pause). */
    async pause(req: { runId: string; question: string }): Promise<void> {
      const w = await writer(req.runId);
      await w.writeStatus('waiting_for_user', req.question);
      await w.writeDataPoint();
    },

    async recordReply(req: RecordReplyInput): Promise<void> {
      const w = await writer(req.runId);
      await w.appendEvent(userReply(req.step, req.text, { metadata: { question_id: req.questionId } }));
      await w.writeStatus('running');
    },

    async finalize(req: FinalizeInput): Promise<void> {
      const w = await writer(req.runId);
      await w.writeStatus(req.status, req.answer, req.reason ?? undefined);
      await w.writeDataPoint();
      writers.delete(req.runId);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;

function currentSignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

function decisionOf(action: AgentAction, args: Record<string, unknown> = {}): DecideResult {
  const { thoughts, ...rest } = args as { thoughts?: string };
  const kind = action.action === 'terminate' ? 'terminate' : action.action === 'ask_user_question' ? 'ask' : 'act';
  let text: string | null = null;
  if (action.action === 'terminate') text = 'answer' in action ? action.answer : `Task ended: ${action.status}`;
  if (action.action === 'ask_user_question') text = action.question;
  return {
    actionName: action.action,
    action: { ...rest, action: action.action },
    thoughts: thoughts ?? '',
    summary: summarizeAction(action),
    kind,
    text,
  };
}

/** A stop action changes nothing on the page: its tool output is its text and its post screenshot is the pre one. */
async function recordStopStep(w: TrajectoryWriter, req: StepRef, decision: DecideResult): Promise<void> {
  const actionId = eventId({ step: req.step, kind: 'action', generation: req.generation });
  const events = await w.events();
  const pre = events.find((e) => e.id === eventId({ step: req.step, kind: 'pre', generation: req.generation }));
  await w.appendEvent(toolOutput(req.step, actionId, { output: decision.text ?? '' }, { generation: req.generation }));
  if (pre?.type === 'observation' && pre.observation_type === 'environment' && pre.screenshot_path) {
    const bytes = await fs.readFile(path.join(w.store.describe(req.runId), pre.screenshot_path)).catch(() => null);
    const post = bytes ? await w.saveScreenshot(req.step, 'post', bytes, req.generation) : pre.screenshot_path;
    await w.appendEvent(
      postObservation(
        req.step,
        actionId,
        { screenshot_path: post, url: pre.url, page_info: pre.page_info },
        { generation: req.generation },
      ),
    );
  }
}

function pageQuestionMessages(question: string, pageText: string): ChatMessage[] {
  const limit = 60_000;
  const text =
    pageText.length > limit ? `${pageText.slice(0, limit)}\n[page text cut at ${limit} characters]` : pageText;
  return [
    {
      role: 'system',
      content:
        'You answer a question using only the text of a web page. Answer briefly; say so if the page does not contain the answer.',
    },
    { role: 'user', content: `Page text:\n\n${text}\n\nQuestion: ${question}` },
  ];
}
