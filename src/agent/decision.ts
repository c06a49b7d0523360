// The recorded form of a model decision: the fields of the `action` event decide appends to events.jsonl
// (the action with the model's thoughts, the agent's state, the raw model output). Pure; shared by decide and
// the persistence benchmark, so both write the same event. An output that was no valid action is recorded too, as
// the model wrote it, so the model sees its own words next step beside the error it caused.
import { nlDescription } from '../actions/describe';
import type { AgentAction } from '../actions/schemas';
import type { Completion } from '../model/client';
import type { ActionFields } from '../trajectory/events';

/** `action_name` of an invalid output in which no action name could be found (a run-folder value: wire name). */
export const INVALID_OUTPUT_ACTION = 'invalid_reply';

/** Which agent decided: a model family's name (or the desktop agent's), and the actions it had. */
type Agent = { name: string; allowedActions: readonly string[] };

/** The `agent_state` of an action: which agent (model family) decided, the tools it had, the facts it kept. */
export function agentState(agent: Agent, facts: string[]): ActionFields['agent_state'] {
  return { agent: `durable-cua/${agent.name}`, tools_available: [...agent.allowedActions], plan: [], facts };
}

/** One model call as recorded: `rawText` is the output word for word (native tool calls written out as blocks). */
export function conversationEntry(completion: Completion, rawText: string) {
  return {
    raw_response: rawText,
    reasoning: completion.reasoning ?? '',
    finish_reason: completion.finishReason ?? '',
    usage: completion.usage,
    ...(completion.toolCalls ? { tool_calls: completion.toolCalls } : {}),
  };
}

function conversation(completion: Completion, rawText: string): ActionFields['llm_conversation'] {
  return { messages: [conversationEntry(completion, rawText)] };
}

export function decisionFields(opts: {
  action: AgentAction;
  thoughts: string;
  family: Agent;
  facts: string[];
  completion: Completion;
  /** The output as text when it differs from `completion.text` (native tool calls). */
  rawText?: string;
}): ActionFields {
  const { thoughts: _t, ...args } = opts.action as AgentAction & { thoughts?: string };
  return {
    action_name: opts.action.action,
    content: { action: opts.action.action, arguments: { ...args, thoughts: opts.thoughts } },
    action_nl_description: nlDescription(opts.thoughts.trim(), opts.action.action, args),
    agent_state: agentState(opts.family, opts.facts),
    llm_conversation: conversation(opts.completion, opts.rawText ?? opts.completion.text),
    grounding: null,
  };
}

/** The action event of an output that was no valid action: what the model wrote, and the error in one line. */
export function invalidDecisionFields(opts: {
  /** The action name as written, if any. */
  actionName: string | undefined;
  /** The arguments as written, if they could be decoded. */
  written: Record<string, unknown> | undefined;
  thoughts: string;
  error: string;
  family: Agent;
  facts: string[];
  completion: Completion;
  rawText?: string;
}): ActionFields {
  const name = opts.actionName && opts.actionName.trim() !== '' ? opts.actionName.slice(0, 80) : INVALID_OUTPUT_ACTION;
  const { action: _a, thoughts: _t, ...args } = opts.written ?? {};
  return {
    action_name: name,
    content: { action: name, arguments: { ...args, thoughts: opts.thoughts } },
    action_nl_description: `${opts.thoughts}\nInvalid output: ${opts.error}`.trim(),
    agent_state: agentState(opts.family, opts.facts),
    llm_conversation: conversation(opts.completion, opts.rawText ?? opts.completion.text),
    grounding: null,
  };
}
