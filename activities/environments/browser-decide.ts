// The browser agent's decide (browser tasks, and the environments an application brings, which take the same
// actions): the task's model family (src/families) builds the request from the run folder's history, the model is
// called, the family reads the output into an action, and the action is recorded (one whose tool calls a model is
// left for act to record with that call). Nothing here is family-specific. A retry answers from the record and never
// calls the model twice for one step.
import type { AgentAction } from '../../src/actions/schemas';
import { historyForStep, memorizedFacts } from '../../src/agent/history';
import { INVALID_OUTPUT_ACTION, decisionFields, invalidDecisionFields } from '../../src/agent/decision';
import { summarizeAction } from '../../src/agent/summary';
import { resizeScreenshot, toDataUrl } from '../../src/image/screenshot';
import type { Completion } from '../../src/model/client';
import { RequestRefusedError, outputTextOf } from '../../src/families/family';
import type { EndpointPromptSettings, FamilyRequest, ModelFamily } from '../../src/families/family';
import { InvalidActionArgumentsError, ModelOutputError, UnknownActionError } from '../../src/model/errors';
import { ModelRequestError } from '../../src/model/client';
import type { ParsedOutput } from '../../src/model/parse';
import type { ScreenSize } from '../../src/actions/tool-schema';
import type { TaskInput } from '../../src/contract/task';
import { actionEvent } from '../../src/trajectory/events';
import { eventId } from '../../src/trajectory/ids';
import type { Event } from '../../src/trajectory/schema';
import type { TrajectoryWriter } from '../../src/trajectory/writer';
import { forTheRecord, recordDecision, recordedAction, recordStopStep } from '../step-records';
import { callModel, callNative, debugLog, endpointFor, nonRetryable, screenOf, withHeartbeat } from '../support';
import { batchMetadata, batchOf, batchStep, continuedMetadata } from '../../src/agent/batch';
import type { BatchStep } from '../../src/agent/batch';
import type { ActivityDeps, RunFiles } from '../support';
import type { DecideResult, StepRef } from '../../src/contract/activities';
/**
 * The last screenshots decide resized, as data URLs. A screenshot is written once and never changes (its name
 * carries run, step, phase and generation), and each one is sent with up to `imagesKept` steps in a row, so
 * caching saves resizing and encoding it again at every step.
 */
const RESIZED_CACHE_SIZE = 64;
const resizedCache = new Map<string, string>();

async function resizedDataUrl(
  file: string,
  family: Pick<ModelFamily, 'resizeFactor' | 'maxPixels'>,
  read: () => Promise<Buffer | undefined>,
): Promise<string> {
  const factor = family.resizeFactor;
  const key = `${file}#${factor}#${family.maxPixels ?? ''}`;
  const hit = resizedCache.get(key);
  if (hit !== undefined) {
    resizedCache.delete(key); // most recently used goes last
    resizedCache.set(key, hit);
    return hit;
  }
  const png = await read();
  if (png === undefined) throw new Error(`screenshot ${file} is missing from the run store`);
  const shot = await resizeScreenshot(png, factor, family.maxPixels ? { maxPixels: family.maxPixels } : {});
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
  family: ModelFamily;
  resized: ScreenSize;
}

/** The model's output as recorded with its action, whatever it turned out to be. */
interface RecordedOutput {
  completion: Completion;
  rawText: string;
  facts: ReturnType<typeof memorizedFacts>;
  /** agent_state.tools_available */
  tools: Pick<ModelFamily, 'name' | 'allowedActions'>;
}

/**
 * The model call: rebuild the chat from the run folder, ask the model, parse, record the action. An output that is no
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
  const { family, resized } = screenOf(input);
  const actionId = eventId({ step: req.step, kind: 'action', generation: req.generation });
  const events = await w.events();
  const recorded = await recordedAction(w, events, actionId);
  // A retry after the action was recorded: answer from the record, never ask the model again.
  const step: BrowserStep = { deps, files, req, input, w, events, family, resized };
  const batched = recorded ? null : batchStep(events, req.step, req.generation);
  const decision = recorded
    ? decisionFromRecord(recorded, family)
    : ((batched && (await continueBatch(step, batched))) ?? (await askModel(step)));
  if (decision.kind !== 'act') await recordStopStep(w, req, decision, events);
  return decision;
}

/** Asks the model for the step's action and records its output (an action, or an invalid output with its error). */
async function askModel(s: BrowserStep): Promise<DecideResult> {
  const { deps, req, input, events, family, resized } = s;
  const endpoint = endpointSettings(deps.config.models[input.model.endpoint], input);
  const request = await requestOf(s, endpoint);
  await withHeartbeat(async () => deps.checkpoint?.('decide', req));
  const tools = request.tools ? { tools: request.tools } : {};
  const client = endpointFor(deps.config, input);
  const call = family.call?.bind(family);
  if (call && !client.endpoint.apiKey) nonRetryable(new ModelRequestError(noKeyMessage(family, input), 401));
  const completion = call
    ? await callNative(client, (endpoint, signal) => call(request, endpoint, signal))
    : await callModel(client, request.messages, undefined, tools);
  const output = {
    text: completion.text,
    ...(completion.toolCalls ? { toolCalls: completion.toolCalls } : {}),
    ...(completion.native !== undefined ? { native: completion.native } : {}),
  };
  const recorded: RecordedOutput = {
    completion,
    rawText: forTheRecord(outputTextOf(family, output)),
    facts: memorizedFacts(events),
    tools: { name: family.name, allowedActions: request.allowed },
  };
  let parsed: ParsedOutput | ModelOutputError;
  try {
    const read = {
      screen: resized,
      allowed: request.allowed,
      terminateOnParseError: input.terminateOnParseError,
      endpoint,
    };
    parsed = family.read(output, read);
  } catch (err) {
    if (!(err instanceof ModelOutputError)) throw err;
    parsed = err;
  }
  return parsed instanceof ModelOutputError
    ? recordInvalidOutput(s, parsed, recorded)
    : recordAction(s, parsed, recorded);
}

/** Why a provider's API cannot be called: the endpoint has no key (a task's own base URL never gets the worker's). */
function noKeyMessage(family: ModelFamily, input: TaskInput): string {
  const name = input.model.endpoint;
  return (
    `model endpoint '${name}' has no API key, and ${family.name} calls its provider's API, which needs one: set ` +
    `models.${name}.apiKey (or CUA_MODEL_API_KEY; any text for a server that takes none)` +
    (input.model.baseUrl ? "; a base URL the task gives itself never gets the worker's key" : '')
  );
}

/** Not a failure: the output is recorded as the model wrote it, with the error the model reads next step. */
async function recordInvalidOutput(
  s: BrowserStep,
  parsed: ModelOutputError,
  output: RecordedOutput,
): Promise<DecideResult> {
  const { req, w, family, resized } = s;
  const error = family.feedback(parsed, resized);
  debugLog('invalid model output', {
    taskId: req.runId,
    step: req.step,
    type: parsed.name,
    detail: parsed.message,
  });
  const fields = invalidDecisionFields({
    actionName: writtenActionName(parsed),
    written: parsed.written,
    thoughts: parsed.thoughts ?? '',
    error,
    family: output.tools,
    facts: output.facts,
    completion: output.completion,
    rawText: output.rawText,
  });
  // `invalid_reply`: a run-folder field (a wire name, kept so recorded runs and their readers still read).
  const metadata = { invalid_reply: { error, error_type: parsed.name, detail: parsed.message } };
  const event = actionEvent(req.step, fields, { generation: req.generation, metadata });
  await w.appendEvent(event);
  return invalidDecision(event, error);
}

/** A valid output: its action recorded (or, when its tool calls a model, left for act to record with that call). */
async function recordAction(s: BrowserStep, parsed: ParsedOutput, output: RecordedOutput): Promise<DecideResult> {
  const { req, w } = s;
  const readAs = readMetadata(parsed);
  if (Object.keys(readAs).length > 0) {
    debugLog('model output accepted leniently', { taskId: req.runId, step: req.step, ...readAs });
  }
  const fields = decisionFields({
    action: parsed.action,
    thoughts: parsed.thoughts,
    family: output.tools,
    facts: output.facts,
    completion: output.completion,
    rawText: output.rawText,
  });
  const metadata = { ...readAs, ...batchMetadata(parsed) };
  const event = actionEvent(req.step, fields, { generation: req.generation, metadata });
  // An action whose tool calls a model is recorded by act, with that call (tool_sub_calls).
  await recordDecision(w, event);
  return decisionOf(s.family, parsed.action, fields.content.arguments ?? {}, parsed.check !== undefined);
}

/**
 * A step that carries out the next action of the step before's model call (a batch, or actions a provider's check
 * held until the person confirmed): recorded without a call of its own (an empty llm_conversation: the call and its
 * usage are the first step's). Undefined when the recorded action no longer reads as one of the family's (the model
 * then decides the step).
 */
async function continueBatch(s: BrowserStep, batched: BatchStep): Promise<DecideResult | undefined> {
  const { req, w, events, family } = s;
  const read = family.actionSchema.safeParse({ thoughts: '', ...batched.next.action });
  if (!read.success) return undefined;
  const action = read.data;
  const thoughts = typeof action.thoughts === 'string' ? action.thoughts : '';
  const fields = decisionFields({
    action,
    thoughts,
    family,
    facts: memorizedFacts(events),
    completion: NO_CALL,
  });
  const metadata = continuedMetadata(batched.next, batched.rest, batched.confirmed);
  const event = actionEvent(
    req.step,
    { ...fields, llm_conversation: { messages: [] } },
    {
      generation: req.generation,
      metadata,
    },
  );
  await recordDecision(w, event);
  return decisionOf(family, action, fields.content.arguments ?? {}, false);
}

/** The completion of a step that made no model call (it continues an earlier step's call). */
const NO_CALL: Completion = {
  text: '',
  reasoning: null,
  finishReason: null,
  usage: { prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0 },
};

/**
 * The step's request, built by the family from the run folder's history: its screenshots come through the run store
 * (a folder, or S3 for workers on several machines), resized by the family's factor and cached. A request the task's
 * settings cannot make (a prompt file that went missing or changed since startRun checked it) ends the task.
 */
async function requestOf(s: BrowserStep, endpoint: ReturnType<typeof endpointSettings>): Promise<FamilyRequest> {
  const { files, req, input, events, family, resized } = s;
  try {
    return await family.request({
      history: historyForStep(events, req.step, req.generation),
      loadImage: (ref) =>
        resizedDataUrl(files.store.describe(`${req.runId}/${ref}`), family, () => files.readBytes(req.runId, ref)),
      screen: resized,
      endpoint,
      identity: input.identity,
      imagesKept: input.imagesKept,
      tokenBudget: input.tokenBudget,
    });
  } catch (err) {
    if (err instanceof RequestRefusedError) nonRetryable(err.cause, err.failureType);
    throw err;
  }
}

/** The endpoint's prompt settings for a family's request, with the model's name as the task calls it. */
function endpointSettings(settings: EndpointPromptSettings | undefined, input: TaskInput) {
  const model = input.model.model ?? settings?.model;
  return settings === undefined && model === undefined ? undefined : { ...settings, model };
}

/** The action event's metadata: how the output was read, when that was not the canonical form. */
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

/** The action name the model wrote in an output that failed, if it wrote one. */
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
    summary: event.action_name === INVALID_OUTPUT_ACTION ? 'invalid output' : `invalid output (${event.action_name})`,
    kind: 'invalid',
    text: error,
  };
}

function decisionOf(
  family: ModelFamily,
  action: AgentAction,
  args: Record<string, unknown>,
  providerCheck: boolean,
): DecideResult {
  const { thoughts, ...rest } = args as { thoughts?: string };
  const { kind, text } = family.outcome(action);
  return {
    actionName: action.action,
    action: { ...rest, action: action.action },
    thoughts: thoughts ?? '',
    summary: summarizeAction(action),
    kind,
    text,
    ...(providerCheck && kind === 'ask' ? { question: 'provider_check' as const } : {}),
  };
}

/** The decision an already recorded action event stands for (a retried decide). */
export function decisionFromRecord(recorded: Extract<Event, { type: 'action' }>, family: ModelFamily): DecideResult {
  const invalid = (recorded.metadata as Record<string, unknown> | undefined)?.invalid_reply as
    { error?: unknown } | undefined;
  if (invalid) return invalidDecision(recorded, typeof invalid.error === 'string' ? invalid.error : 'invalid output');
  const { thoughts: _t, ...recordedArgs } = recorded.content.arguments as Record<string, unknown>;
  const action = family.actionSchema.parse({ action: recorded.content.action, ...recordedArgs });
  return decisionOf(family, action, recorded.content.arguments, batchOf(recorded)?.check !== undefined);
}
