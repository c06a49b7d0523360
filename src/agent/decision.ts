// The recorded form of a model decision: the fields of the `action` event decide appends to events.jsonl
// (the action with the model's thoughts, the agent's state, the raw model reply). Pure; shared by decide and
// the persistence benchmark, so both write the same event.
import { describeAction } from '../actions/describe';
import type { ModelProfile } from '../actions/profiles';
import type { AgentAction } from '../actions/schemas';
import type { Completion } from '../model/client';
import type { ActionFields } from '../trajectory/events';

export function decisionFields(opts: {
  action: AgentAction;
  thoughts: string;
  profile: Pick<ModelProfile, 'name' | 'allowedActions'>;
  facts: string[];
  completion: Completion;
}): ActionFields {
  const { thoughts: _t, ...args } = opts.action as AgentAction & { thoughts?: string };
  const { completion } = opts;
  return {
    action_name: opts.action.action,
    content: { action: opts.action.action, arguments: { ...args, thoughts: opts.thoughts } },
    action_nl_description: `${opts.thoughts}\n${describeAction(opts.action)}`.trim(),
    agent_state: {
      agent: `durable-cua/${opts.profile.name}`,
      tools_available: [...opts.profile.allowedActions],
      plan: [],
      facts: opts.facts,
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
  };
}
