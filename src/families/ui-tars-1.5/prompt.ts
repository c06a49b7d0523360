// UI-TARS-1.5's prompt as the model was trained on it: ByteDance's `getSystemPromptV1_5('en', 'normal')` from
// UI-TARS-desktop (apps/ui-tars/src/main/agent/prompts.ts, written here from the text, not copied in code), with the
// person's instruction appended straight after its closing `## User Instruction` line. The model reads it as the
// first user message, as UI-TARS-desktop and the OSWorld agent send it (no system message: the chat template adds
// its default one).

/** The prompt text up to and including the `## User Instruction` line; the instruction follows it. */
export const UI_TARS_PROMPT = `You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.

## Output Format
\`\`\`
Thought: ...
Action: ...
\`\`\`

## Action Space

click(start_box='<|box_start|>(x1,y1)<|box_end|>')
left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')
right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
hotkey(key='ctrl c') # Split keys with a space and use lowercase. Also, do not use more than 3 keys in one hotkey action.
type(content='xxx') # Use escape characters \\', \\", and \\n in content part to ensure we can parse the content in normal python string format. If you want to submit your input, use \\n at the end of content.
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left') # Show more information on the \`direction\` side.
wait() # Sleep for 5s and take a screenshot to check for any changes.
finished()
call_user() # Submit the task and call the user when the task is unsolvable, or when you need the user's help.


## Note
- Use English in \`Thought\` part.
- Generate a well-defined and practical strategy in the \`Thought\` section, summarizing your next move and its objective.

## User Instruction
`;

/** The first user message's text: the prompt, then the task as the person wrote it. */
export function promptWithInstruction(instruction: string): string {
  return UI_TARS_PROMPT + instruction;
}

/** One action's written form for the feedback the model reads, as the prompt shows it. */
export const UI_TARS_FORMS: Readonly<Record<string, string>> = {
  click: "click(start_box='<|box_start|>(x1,y1)<|box_end|>')",
  left_double: "left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')",
  right_single: "right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')",
  drag: "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')",
  hotkey: "hotkey(key='ctrl c')",
  type: "type(content='xxx')",
  scroll: "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')",
  wait: 'wait()',
  finished: 'finished()',
  call_user: 'call_user()',
};

/** The names of the actions the prompt offers, in its order. */
export const UI_TARS_ACTION_NAMES: readonly string[] = Object.keys(UI_TARS_FORMS);
