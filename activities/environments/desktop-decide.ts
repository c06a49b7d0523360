// The desktop agent's decide (open-computer-use's perceive + decide): a vision call describes the step's screenshot
// in a fixed template, then the action model, reading the run's memory and that description, answers with native
// tool calls (each model in its endpoint's API: desktop-models.ts). The first call is recorded as the step's action event, with the description and all the step's calls
// in its metadata; a retry answers from that record and never calls the models twice for one step.
import { INVALID_OUTPUT_ACTION, agentState, conversationEntry } from '../../src/agent/decision';
import {
  DEFAULT_MEMORY_TOKEN_BUDGET,
  DESKTOP_TOOLS,
  noCallOutcome,
  checkCall,
  describeMessages,
  desktopMessages,
  readDescription,
  readToolCalls,
  summarizeCall,
  systemPrompt,
} from '../../src/desktop/agent';
import type { DesktopCall, NoCallOutcome } from '../../src/desktop/agent';
import { toDataUrl } from '../../src/image/screenshot';
import { outputAsText } from '../../src/model/parse';
import { CALL_KIND_HEADER, ENTRY_INDEX_HEADER } from '../../src/scripted/server';
import { actionEvent } from '../../src/trajectory/events';
import type { ActionFields } from '../../src/trajectory/events';
import { eventId } from '../../src/trajectory/ids';
import type { Event } from '../../src/trajectory/schema';
import type { TrajectoryWriter } from '../../src/trajectory/writer';
import { forTheRecord, recordStopStep } from '../step-records';
import { withHeartbeat } from '../support';
import { askDesktopModel, desktopModel } from './desktop-models';
import type { ActivityDeps, RunFiles } from '../support';
import { DESKTOP_AGENT, desktopScreen, stepStart } from './desktop-step';
import type { DecideCall, DecideResult, StepRef } from '../../src/contract/activities';
import type { TaskInput } from '../../src/contract/task';

type ActionEvent = Extract<Event, { type: 'action' }>;

/**
 * Metadata of a step whose output called no tool and so ended the task (desktop.endOnNoCall): its action is the stop
 * the output stands for, while `tool_calls` stays as the model gave it (none). `final_reply`: a run-folder field (a
 * wire name, kept so recorded runs still read).
 */
export const FINAL_OUTPUT_KEY = 'final_reply';

export async function decideDesktop(
  deps: ActivityDeps,
  files: RunFiles,
  req: StepRef,
  input: TaskInput,
): Promise<DecideResult> {
  const w = await files.writer(req.runId);
  const events = await w.events();
  const recorded = stepStart(events, req);
  if (recorded) return decisionFromRecord(recorded);

  const preId = eventId({ step: req.step, kind: 'pre', generation: req.generation });
  const pre = events.find((e) => e.id === preId);
  const shotPath = pre?.type === 'observation' && pre.observation_type === 'environment' ? pre.screenshot_path : '';
  const png = shotPath ? await w.store.readBytes(`${req.runId}/${shotPath}`) : undefined;
  const entry = { [ENTRY_INDEX_HEADER]: String(req.step - 1) };
  const d = deps.config.desktop;

  // Each model in the API its endpoint's family speaks (chat completions, Anthropic's or Gemini's own).
  const vision = desktopModel(deps.config, input, d.visionEndpoint);
  const actor = desktopModel(deps.config, input);
  // Perceive: the screen in the fixed template.
  await withHeartbeat(async () => deps.checkpoint?.('decide', req));
  const described = png
    ? (
        await askDesktopModel(
          vision,
          describeMessages({ objective: input.instruction, screenshotDataUrl: toDataUrl(png, 'image/png') }),
          { ...entry, [CALL_KIND_HEADER]: 'describe' },
        )
      ).completion
    : undefined;
  const description = readDescription(described?.text ?? 'No screenshot could be taken of the desktop.');

  // Decide: the action model with the tools.
  const screen = desktopScreen(input);
  const messages = desktopMessages(events, {
    system: systemPrompt({ width: screen.width, height: screen.height, tools: DESKTOP_TOOLS }),
    objective: input.instruction,
    description: description.text,
    tokenBudget: input.tokenBudget || DEFAULT_MEMORY_TOKEN_BUDGET,
  });
  const { completion, malformed } = await askDesktopModel(
    actor,
    messages,
    { ...entry, [CALL_KIND_HEADER]: 'action' },
    DESKTOP_TOOLS,
  );
  const read = readToolCalls(completion);
  const conversation = [
    ...(described ? [conversationEntry(described, forTheRecord(described.text))] : []),
    conversationEntry(completion, forTheRecord(outputAsText(completion))),
  ];
  const metadata = {
    screen_description: description.text,
    ...(description.done !== null ? { screen_done: description.done } : {}),
    tool_calls: read.calls.map((c) => ({
      name: c.name,
      arguments: c.arguments,
      ...(c.error ? { error: c.error } : {}),
    })),
    read_from: read.source,
    ...(read.dropped ? { dropped_tool_calls: read.dropped } : {}),
  };
  const first = read.calls[0];
  if (!first) {
    const output = { text: completion.text, thoughts: read.thoughts, conversation, metadata };
    // A call the provider itself could not read is an invalid output the model is told about, never a last word.
    const outcome: NoCallOutcome = malformed
      ? { kind: 'invalid', error: malformed, errorType: 'MalformedFunctionCall' }
      : noCallOutcome(output.text, d.endOnNoCall);
    return recordNoCall({ w, req, events }, output, outcome);
  }
  const event = actionEvent(
    req.step,
    {
      action_name: first.name,
      content: { action: first.name, arguments: { ...first.arguments, thoughts: read.thoughts } },
      action_nl_description: `${read.thoughts}\n${summarizeCall(first)}`.trim(),
      agent_state: agentState(DESKTOP_AGENT, []),
      llm_conversation: { messages: conversation },
      grounding: null,
    },
    { generation: req.generation, metadata },
  );
  await w.appendEvent(event);
  return decisionFromRecord(event);
}

/** A step's output as decide records it: the model's text and thoughts, the conversation, the step's metadata. */
interface StepOutput {
  text: string;
  thoughts: string;
  conversation: ReturnType<typeof conversationEntry>[];
  metadata: Record<string, unknown>;
}

/**
 * An output that called no tool: the model's last word (desktop.endOnNoCall), recorded as a stop with its text as the
 * answer, or an invalid output the model reads at the next step.
 */
async function recordNoCall(
  at: { w: TrajectoryWriter; req: StepRef; events: readonly Event[] },
  output: StepOutput,
  outcome: NoCallOutcome,
): Promise<DecideResult> {
  const { w, req, events } = at;
  const { thoughts, conversation, metadata } = output;
  if (outcome.kind === 'final') {
    // The model's last word: recorded as a stop with its text as the answer (act records the tool output).
    const stop = checkCall('stop', { answer: outcome.answer });
    const event = actionEvent(
      req.step,
      {
        action_name: stop.name,
        content: { action: stop.name, arguments: { ...stop.arguments, thoughts } },
        action_nl_description: `${summarizeCall(stop)} (the output called no tool: its text is the answer)`,
        agent_state: agentState(DESKTOP_AGENT, []),
        llm_conversation: { messages: conversation },
        grounding: null,
      },
      { generation: req.generation, metadata: { ...metadata, [FINAL_OUTPUT_KEY]: true } },
    );
    await w.appendEvent(event);
    return decisionFromRecord(event);
  }
  const { error, errorType } = outcome;
  const fields: ActionFields = {
    action_name: INVALID_OUTPUT_ACTION,
    content: { action: INVALID_OUTPUT_ACTION, arguments: { thoughts } },
    action_nl_description: `${thoughts}\nInvalid output: ${error}`.trim(),
    agent_state: agentState(DESKTOP_AGENT, []),
    llm_conversation: { messages: conversation },
    grounding: null,
  };
  const event = actionEvent(req.step, fields, {
    generation: req.generation,
    metadata: { ...metadata, invalid_reply: { error, error_type: errorType, detail: error } },
  });
  await w.appendEvent(event);
  const decision = invalidDecision(event, error);
  await recordStopStep(w, req, decision, events);
  return decision;
}

function invalidDecision(event: ActionEvent, error: string): DecideResult {
  const thoughts = (event.content.arguments as { thoughts?: string } | undefined)?.thoughts ?? '';
  return {
    actionName: event.action_name,
    action: { action: event.action_name },
    thoughts,
    summary: 'invalid output (no tool call)',
    kind: 'invalid',
    text: error,
  };
}

/** One call as the workflow carries it: stop and ask_user (when well formed) end or pause the step. */
function decideCall(call: DesktopCall, thoughts: string): DecideCall {
  const usable = call.known && !call.error;
  const a = call.arguments;
  const kind = usable && call.name === 'stop' ? 'terminate' : usable && call.name === 'ask_user' ? 'ask' : 'act';
  let text: string | null = null;
  if (kind === 'terminate') text = typeof a.answer === 'string' && a.answer.trim() !== '' ? a.answer : thoughts;
  if (kind === 'ask') text = String(a.question);
  return {
    actionName: call.name,
    action: { ...a, action: call.name },
    thoughts,
    summary: summarizeCall(call),
    kind,
    text,
  };
}

/** The step's decision from its recorded first action (a retried decide, or the fresh record). */
function decisionFromRecord(event: ActionEvent): DecideResult {
  const meta = (event.metadata ?? {}) as {
    invalid_reply?: { error?: unknown };
    tool_calls?: unknown;
    [FINAL_OUTPUT_KEY]?: unknown;
  };
  if (meta.invalid_reply) {
    const error = typeof meta.invalid_reply.error === 'string' ? meta.invalid_reply.error : 'invalid output';
    return invalidDecision(event, error);
  }
  const { thoughts = '', ...args } = (event.content.arguments ?? {}) as { thoughts?: string; [k: string]: unknown };
  const listed =
    meta[FINAL_OUTPUT_KEY] === true
      ? [{ name: event.action_name, arguments: args }]
      : Array.isArray(meta.tool_calls)
        ? (meta.tool_calls as { name?: unknown; arguments?: unknown }[])
        : [];
  const calls = listed.map((c) => checkCall(String(c.name ?? ''), (c.arguments ?? {}) as Record<string, unknown>));
  const decided = calls.map((c, i) => decideCall(c, i === 0 ? thoughts : ''));
  const first = decided[0];
  if (!first) return invalidDecision(event, 'Your output called no tool.');
  return { ...first, calls: decided };
}
