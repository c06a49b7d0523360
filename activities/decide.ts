// The decide activity (shared queue): rebuild the chat from the run folder, call the model, parse, record the
// action. A retry answers from the record and never calls the model twice for one step.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AgentAction } from '../src/actions/schemas';
import { historyForStep, memorizedFacts } from '../src/agent/history';
import { decisionFields } from '../src/agent/decision';
import { summarizeAction } from '../src/agent/summary';
import { resizeScreenshot, toDataUrl } from '../src/image/screenshot';
import type { ChatMessage } from '../src/model/client';
import { buildChatMessages } from '../src/model/context';
import { ModelOutputError } from '../src/model/errors';
import { parseModelOutput } from '../src/model/parse';
import type { ParsedOutput } from '../src/model/parse';
import { buildSystemPrompt, loadPromptOverride } from '../src/model/prompt';
import { actionEvent, postObservation, toolOutput } from '../src/trajectory/events';
import { eventId } from '../src/trajectory/ids';
import type { Event } from '../src/trajectory/schema';
import type { TrajectoryWriter } from '../src/trajectory/writer';
import { callModel, endpointFor, nonRetryable, screenOf, withHeartbeat } from './support';
import type { ActivityDeps, RunFiles } from './support';
import type { DecideResult, StepRef } from './types';

/**
 * The last screenshots decide resized, as data URLs. A screenshot is written once and never changes (its name
 * carries run, step, phase and generation), and each one is sent with up to `imagesKept` steps in a row, so
 * caching saves resizing and encoding it again at every step.
 */
const RESIZED_CACHE_SIZE = 64;
const resizedCache = new Map<string, string>();

async function resizedDataUrl(file: string, factor: number): Promise<string> {
  const key = `${file}#${factor}`;
  const hit = resizedCache.get(key);
  if (hit !== undefined) {
    resizedCache.delete(key); // most recently used goes last
    resizedCache.set(key, hit);
    return hit;
  }
  const shot = await resizeScreenshot(await fs.readFile(file), factor);
  const url = toDataUrl(shot.data, shot.mime);
  resizedCache.set(key, url);
  if (resizedCache.size > RESIZED_CACHE_SIZE) resizedCache.delete(resizedCache.keys().next().value as string);
  return url;
}

export function createDecideActivity(deps: ActivityDeps, files: RunFiles) {
  return {
    /** The model call: rebuild the chat from the run folder, ask the model, parse, record the action. */
    async decide(req: StepRef): Promise<DecideResult> {
      const w = await files.writer(req.runId);
      const input = await files.input(req.runId);
      const { profile, resized } = screenOf(input);
      const actionId = eventId({ step: req.step, kind: 'action', generation: req.generation });
      const events = await w.events();
      const recorded = events.find((e): e is Extract<Event, { type: 'action' }> => e.id === actionId);
      let decision: DecideResult;
      if (recorded) {
        // A retry after the action was recorded: answer from the record, never ask the model again.
        const { thoughts: _t, ...recordedArgs } = recorded.content.arguments as Record<string, unknown>;
        const action = profile.actionSchema.parse({ action: recorded.content.action, ...recordedArgs });
        decision = decisionOf(action, recorded.content.arguments);
      } else {
        const promptFile = deps.config.models[input.model.endpoint]?.promptFile;
        const override = promptFile
          ? await loadPromptOverride(promptFile).catch((err) => nonRetryable(err))
          : undefined;
        const messages = await buildChatMessages(historyForStep(events, req.step, req.generation), {
          systemPrompt: buildSystemPrompt({ profile, screen: resized, ...(override ? { override } : {}) }),
          maxImages: input.imagesKept,
          tokenBudget: input.tokenBudget,
          loadImage: (ref) => resizedDataUrl(path.join(files.dir(req.runId), ref), profile.resizeFactor),
        });
        await withHeartbeat(async () => deps.checkpoint?.('decide', req));
        const completion = await callModel(endpointFor(deps.config, input), messages as ChatMessage[]);
        let parsed: ParsedOutput;
        try {
          parsed = parseModelOutput(completion.text, profile, { terminateOnParseError: input.terminateOnParseError });
        } catch (err) {
          if (err instanceof ModelOutputError) nonRetryable(err, 'ModelOutputError');
          throw err;
        }
        const fields = decisionFields({
          action: parsed.action,
          thoughts: parsed.thoughts,
          profile,
          facts: memorizedFacts(events),
          completion,
        });
        await w.appendEvent(
          actionEvent(req.step, fields, {
            generation: req.generation,
            metadata: parsed.recoveredBy ? { recovered_by: parsed.recoveredBy, parse_error: parsed.parseError } : {},
          }),
        );
        decision = decisionOf(parsed.action, fields.content.arguments ?? {});
      }
      if (decision.kind !== 'act') await recordStopStep(w, req, decision, events);
      return decision;
    },
  };
}

function decisionOf(action: AgentAction, args: Record<string, unknown>): DecideResult {
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
async function recordStopStep(
  w: TrajectoryWriter,
  req: StepRef,
  decision: DecideResult,
  events: readonly Event[],
): Promise<void> {
  const id = (kind: 'action' | 'pre') => eventId({ step: req.step, kind, generation: req.generation });
  // The step's pre observation was written before decide ran, so the events decide already read hold it.
  const pre = events.find((e) => e.id === id('pre'));
  await w.appendEvent(
    toolOutput(req.step, id('action'), { output: decision.text ?? '' }, { generation: req.generation }),
  );
  if (pre?.type !== 'observation' || pre.observation_type !== 'environment' || !pre.screenshot_path) return;
  const bytes = await w.store.readBytes(`${req.runId}/${pre.screenshot_path}`);
  const post = bytes ? await w.saveScreenshot(req.step, 'post', bytes, req.generation) : pre.screenshot_path;
  await w.appendEvent(
    postObservation(
      req.step,
      id('action'),
      { screenshot_path: post, url: pre.url, page_info: pre.page_info },
      { generation: req.generation },
    ),
  );
}
