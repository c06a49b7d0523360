// The browser agent's decide (browser tasks, and the environments an application brings, which take the same
// actions): rebuild the chat from the run folder, call the model, parse, record the action (one whose tool calls a
// model is left for act to record with that call). A retry answers from the record and never calls the model twice
// for one step.
import type { AgentAction } from '../../src/actions/schemas';
import { historyForStep, memorizedFacts } from '../../src/agent/history';
import { INVALID_REPLY_ACTION, decisionFields, invalidDecisionFields } from '../../src/agent/decision';
import { summarizeAction } from '../../src/agent/summary';
import { resizeScreenshot, toDataUrl } from '../../src/image/screenshot';
import type { ChatMessage, Completion } from '../../src/model/client';
import { buildChatMessages } from '../../src/model/context';
import type { ModelProfile } from '../../src/actions/profiles';
import { InvalidActionArgumentsError, ModelOutputError, UnknownActionError } from '../../src/model/errors';
import { invalidReplyFeedback } from '../../src/model/feedback';
import { parseModelOutput, replyAsText } from '../../src/model/parse';
import type { ParsedOutput } from '../../src/model/parse';
import { buildSystemPrompt, loadPromptOverride, promptActions } from '../../src/model/prompt';
import type { ScreenSize } from '../../src/actions/tool-schema';
import type { Config } from '../../src/runtime/config';
import type { TaskInput } from '../../src/contract/task';
import { actionEvent } from '../../src/trajectory/events';
import { eventId } from '../../src/trajectory/ids';
import type { Event } from '../../src/trajectory/schema';
import type { TrajectoryWriter } from '../../src/trajectory/writer';
import { forTheRecord, recordDecision, recordedAction, recordStopStep } from '../step-records';
import { callModel, debugLog, endpointFor, nonRetryable, screenOf, withHeartbeat } from '../support';
import type { ActivityDeps, RunFiles } from '../support';
import type { DecideResult, StepRef } from '../../src/contract/activities';
/**
 * The last screenshots decide resized, as data URLs. A screenshot is written once and never changes (its name
 * carries run, step, phase and generation), and each one is sent with up to `imagesKept` steps in a row, so
 * caching saves resizing and encoding it again at every step.
 */
const RESIZED_CACHE_SIZE = 64;
const resizedCache = new Map<string, string>();

async function resizedDataUrl(file: string, factor: number, read: () => Promise<Buffer | undefined>): Promise<string> {
  const key = `${file}#${factor}`;
  const hit = resizedCache.get(key);
  if (hit !== undefined) {
    resizedCache.delete(key); // most recently used goes last
    resizedCache.set(key, hit);
    return hit;
  }
  const png = await read();
  if (png === undefined) throw new Error(`screenshot ${file} is missing from the run store`);
  const shot = await resizeScreenshot(png, factor);
  const url = toDataUrl(shot.data, shot.mime);
  resizedCache.set(key, url);
  if (resizedCache.size > RESIZED_CACHE_SIZE) resizedCache.delete(resizedCache.keys().next().value as string);
  return url;
}

/** A step of the browser agent being decided: where it is recorded, what was recorded before, the task's screen. */
interface BrowserStep {
  deps: ActivityDeps;
  files: RunFiles;
  req: StepRef;
  input: TaskInput;
  w: TrajectoryWriter;
  events: readonly Event[];
  profile: ModelProfile;
  resized: ScreenSize;
}

/** The model's reply as recorded with its action, whatever it turned out to be. */
interface Reply {
  completion: Completion;
  rawText: string;
  facts: ReturnType<typeof memorizedFacts>;
  /** agent_state.tools_available */
  tools: Pick<ModelProfile, 'name' | 'allowedActions'>;
}

/**
 * The model call: rebuild the chat from the run folder, ask the model, parse, record the action. A reply that is no
 * valid action is recorded with its error and returned as `invalid` (the loop goes on; the model reads the error next
 * step), unless the task asked for Fara's terminate-on-parse-error.
 */
export async function decideBrowser(
  deps: ActivityDeps,
  files: RunFiles,
  req: StepRef,
  input: TaskInput,
): Promise<DecideResult> {
  const w = await files.writer(req.runId);
  const { profile, resized } = screenOf(input);
  const actionId = eventId({ step: req.step, kind: 'action', generation: req.generation });
  const events = await w.events();
  const recorded = await recordedAction(w, events, actionId);
  // A retry after the action was recorded: answer from the record, never ask the model again.
  const decision = recorded
    ? decisionFromRecord(recorded, profile)
    : await askModel({ deps, files, req, input, w, events, profile, resized });
  if (decision.kind !== 'act') await recordStopStep(w, req, decision, events);
  return decision;
}

/** Asks the model for the step's action and records its reply (an action, or an invalid reply with its error). */
async function askModel(s: BrowserStep): Promise<DecideResult> {
  const { deps, files, req, input, events, profile, resized } = s;
  const settings = deps.config.models[input.model.endpoint];
  const { systemPrompt, allowed } = await systemPromptOf(settings, input, profile, resized);
  const messages = await buildChatMessages(historyForStep(events, req.step, req.generation), {
    systemPrompt,
    nudge: settings?.stepPrompt ?? profile.stepPrompt,
    maxImages: input.imagesKept,
    tokenBudget: input.tokenBudget,
    // Through the run store (a folder, or S3 for workers on several machines); cached once resized.
    loadImage: (ref) =>
      resizedDataUrl(files.store.describe(`${req.runId}/${ref}`), profile.resizeFactor, () =>
        files.readBytes(req.runId, ref),
      ),
  });
  await withHeartbeat(async () => deps.checkpoint?.('decide', req));
  const completion = await callModel(endpointFor(deps.config, input), messages as ChatMessage[]);
  const reply = { text: completion.text, ...(completion.toolCalls ? { toolCalls: completion.toolCalls } : {}) };
  const recorded: Reply = {
    completion,
    rawText: forTheRecord(replyAsText(reply)),
    facts: memorizedFacts(events),
    tools: { name: profile.name, allowedActions: allowed },
  };
  let parsed: ParsedOutput | ModelOutputError;
  try {
    parsed = parseModelOutput(reply, profile, {
      terminateOnParseError: input.terminateOnParseError,
      screen: resized,
      allowedActions: allowed,
    });
  } catch (err) {
    if (!(err instanceof ModelOutputError)) throw err;
    parsed = err;
  }
  return parsed instanceof ModelOutputError
    ? recordInvalidReply(s, parsed, recorded)
    : recordAction(s, parsed, recorded);
}

/** Not a failure: the reply is recorded as the model wrote it, with the error the model reads next step. */
async function recordInvalidReply(s: BrowserStep, parsed: ModelOutputError, reply: Reply): Promise<DecideResult> {
  const { req, w, profile, resized } = s;
  const error = invalidReplyFeedback(parsed, profile, resized);
  debugLog('invalid model reply', {
    runId: req.runId,
    step: req.step,
    type: parsed.name,
    detail: parsed.message,
  });
  const fields = invalidDecisionFields({
    actionName: writtenActionName(parsed),
    written: parsed.written,
    thoughts: parsed.thoughts ?? '',
    error,
    profile: reply.tools,
    facts: reply.facts,
    completion: reply.completion,
    rawText: reply.rawText,
  });
  const metadata = { invalid_reply: { error, error_type: parsed.name, detail: parsed.message } };
  const event = actionEvent(req.step, fields, { generation: req.generation, metadata });
  await w.appendEvent(event);
  return invalidDecision(event, error);
}

/** A valid reply: its action recorded (or, when its tool calls a model, left for act to record with that call). */
async function recordAction(s: BrowserStep, parsed: ParsedOutput, reply: Reply): Promise<DecideResult> {
  const { req, w } = s;
  const readAs = readMetadata(parsed);
  if (Object.keys(readAs).length > 0) {
    debugLog('model reply accepted leniently', { runId: req.runId, step: req.step, ...readAs });
  }
  const fields = decisionFields({
    action: parsed.action,
    thoughts: parsed.thoughts,
    profile: reply.tools,
    facts: reply.facts,
    completion: reply.completion,
    rawText: reply.rawText,
  });
  const event = actionEvent(req.step, fields, { generation: req.generation, metadata: readAs });
  // An action whose tool calls a model is recorded by act, with that call (tool_sub_calls).
  await recordDecision(w, event);
  return decisionOf(parsed.action, fields.content.arguments ?? {});
}
type EndpointSettings = Config['models'][string];

/**
 * The system prompt of a step (ours, or the endpoint's prompt file filled in) and the actions the model may use: a
 * prompt file's `"enum"` list, when it offers fewer than the profile (src/model/prompt.ts promptActions). What
 * startRun checked can still fail here when the file changed since: then the task ends (InvalidTaskInput).
 */
async function systemPromptOf(
  settings: EndpointSettings | undefined,
  input: TaskInput,
  profile: ModelProfile,
  screen: ScreenSize,
): Promise<{ systemPrompt: string; allowed: readonly string[] }> {
  const override = settings?.promptFile
    ? await loadPromptOverride(settings.promptFile).catch((err) => nonRetryable(err))
    : undefined;
  try {
    const identity = input.identity ?? settings?.identity;
    const systemPrompt = buildSystemPrompt({ profile, screen, identity, ...(override ? { override } : {}) });
    return { systemPrompt, allowed: override ? promptActions(systemPrompt, profile).allowed : profile.allowedActions };
  } catch (err) {
    nonRetryable(err, 'InvalidTaskInput');
  }
}

/** The action event's metadata: how the reply was read, when that was not the canonical form. */
function readMetadata(parsed: ParsedOutput): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  if (parsed.recoveredBy) meta.recovered_by = parsed.recoveredBy;
  if (parsed.parseError) meta.parse_error = parsed.parseError;
  const notes = parsed.notes;
  if (!notes) return meta;
  if (notes.source !== 'tool_call_tag') meta.read_from = notes.source;
  if (notes.shape) meta.call_shape = notes.shape;
  if (notes.ignoredArguments.length > 0) meta.ignored_arguments = notes.ignoredArguments;
  if (notes.coerced.length > 0) meta.coerced = notes.coerced;
  if (notes.extraToolCalls > 0) meta.extra_tool_calls = notes.extraToolCalls;
  return meta;
}

/** The action name the model wrote in a reply that failed, if it wrote one. */
function writtenActionName(err: ModelOutputError): string | undefined {
  if (err instanceof UnknownActionError || err instanceof InvalidActionArgumentsError) return err.action;
  const name = err.written?.action;
  return typeof name === 'string' ? name : undefined;
}

function invalidDecision(event: Extract<Event, { type: 'action' }>, error: string): DecideResult {
  const { thoughts, ...rest } = event.content.arguments as { thoughts?: string };
  return {
    actionName: event.action_name,
    action: { ...rest, action: event.action_name },
    thoughts: thoughts ?? '',
    summary: event.action_name === INVALID_REPLY_ACTION ? 'invalid reply' : `invalid reply (${event.action_name})`,
    kind: 'invalid',
    text: error,
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

/** The decision an already recorded action event stands for (a retried decide). */
export function decisionFromRecord(recorded: Extract<Event, { type: 'action' }>, profile: ModelProfile): DecideResult {
  const invalid = (recorded.metadata as Record<string, unknown> | undefined)?.invalid_reply as
    { error?: unknown } | undefined;
  if (invalid) return invalidDecision(recorded, typeof invalid.error === 'string' ? invalid.error : 'invalid reply');
  const { thoughts: _t, ...recordedArgs } = recorded.content.arguments as Record<string, unknown>;
  const action = profile.actionSchema.parse({ action: recorded.content.action, ...recordedArgs });
  return decisionOf(action, recorded.content.arguments);
}
