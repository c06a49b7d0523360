// Anthropic's computer-use tools as this family speaks them: the three versions (the beta tools computer_20250124 and
// computer_20251124, which need an `anthropic-beta` header, and the GA computer_toolset_20260801, which needs none),
// how one is chosen for an endpoint, the `tools[]` entry each needs, and our short system prompt.
import type { ScreenSize } from '../../actions/tool-schema';

export const COMPUTER_20250124 = 'computer_20250124';
export const COMPUTER_20251124 = 'computer_20251124';
export const COMPUTER_TOOLSET = 'computer_toolset_20260801';
/** The tools this family speaks, oldest first. */
export const ANTHROPIC_TOOLS = [COMPUTER_20250124, COMPUTER_20251124, COMPUTER_TOOLSET] as const;
export type AnthropicTool = (typeof ANTHROPIC_TOOLS)[number];

/** The `toolset_name` the toolset's tool_use blocks carry and every tool_result answering one echoes. */
export const TOOLSET_NAME = 'computer';
/** The beta tools' one tool name (the action is `input.action`). */
export const BETA_TOOL_NAME = 'computer';

/** The `anthropic-beta` value each beta tool needs; the GA toolset needs none. */
export const BETA_HEADERS: Readonly<Record<Exclude<AnthropicTool, typeof COMPUTER_TOOLSET>, string>> = {
  [COMPUTER_20250124]: 'computer-use-2025-01-24',
  [COMPUTER_20251124]: 'computer-use-2025-11-24',
};

/**
 * Toolset members we cannot carry out (no action of ours does what they do), withheld from the model through the
 * toolset's `configs`. The beta tools cannot withhold actions: the system prompt names them, and an output using one
 * is answered with an error the model reads.
 */
export const WITHHELD_MEMBERS = ['hold_key', 'cursor_position', 'left_mouse_down', 'left_mouse_up', 'middle_click'];

/**
 * The tool a model's name implies, by the models each tool is documented for:
 * - Opus 4.5, 4.6 and 4.7 and Sonnet 4.6 speak computer_20251124;
 * - Sonnet 4.5, Haiku 4.5, Opus 4.1, Sonnet 4, Opus 4 and Sonnet 3.7 speak computer_20250124;
 * - every other name (Claude 5 and later, Opus 4.8, a stand-in's script name) gets the newest GA tool, the toolset.
 * Names are matched on their family and version words, with or without a date suffix (`claude-sonnet-4-5-20250929`).
 */
export function toolForModel(model: string | undefined): AnthropicTool {
  const name = (model ?? '').toLowerCase();
  if (/(opus-4-[567]|sonnet-4-6)(?!\d)/.test(name)) return COMPUTER_20251124;
  if (/(sonnet-4-5|haiku-4-5|opus-4-1|3-7-sonnet|sonnet-3-7)(?!\d)/.test(name)) return COMPUTER_20250124;
  if (/(sonnet|opus)-4(-20\d{6})?$/.test(name)) return COMPUTER_20250124;
  return COMPUTER_TOOLSET;
}

/**
 * Whether a model takes `temperature`: the models of the beta tools up to Opus 4.6 do; Opus 4.7 and every later
 * model answer a 400 to it, and so (to be safe) does a name not known here.
 */
export function acceptsTemperature(model: string): boolean {
  return toolForModel(model) !== COMPUTER_TOOLSET && !/opus-4-7(?!\d)/.test(model.toLowerCase());
}

/** The endpoint's tool (`models.<name>.tool`) when it names one of ours, else the tool its model's name implies. */
export function chooseTool(configured: string | undefined, model: string | undefined): AnthropicTool {
  const known: readonly string[] = ANTHROPIC_TOOLS;
  if (configured !== undefined && known.includes(configured)) return configured as AnthropicTool;
  return toolForModel(model);
}

/** The beta header a tool needs, or null (the toolset). */
export function betaHeaderOf(tool: AnthropicTool): string | null {
  return tool === COMPUTER_TOOLSET ? null : BETA_HEADERS[tool];
}

/** The tool a request body offers (its `tools[]` computer entry), or null when it offers none of ours. */
export function toolOfBody(body: { tools?: readonly unknown[] }): AnthropicTool | null {
  const known: readonly unknown[] = ANTHROPIC_TOOLS;
  for (const t of body.tools ?? []) {
    const type = (t as { type?: unknown } | null)?.type;
    if (known.includes(type)) return type as AnthropicTool;
  }
  return null;
}

/**
 * The `tools[]` entry of a tool. The beta tools state the display, which is the screenshot we send (so the model's
 * coordinates are screenshot pixels); the toolset states none (it speaks screenshot pixels) and withholds the members
 * we cannot carry out.
 */
export function toolEntry(tool: AnthropicTool, screen: ScreenSize): Record<string, unknown> {
  if (tool === COMPUTER_TOOLSET) {
    return { type: tool, configs: Object.fromEntries(WITHHELD_MEMBERS.map((m) => [m, { enabled: false }])) };
  }
  const display = { display_width_px: screen.width, display_height_px: screen.height };
  return tool === COMPUTER_20251124
    ? { type: tool, name: BETA_TOOL_NAME, ...display, enable_zoom: true }
    : { type: tool, name: BETA_TOOL_NAME, ...display };
}

/** Our system prompt: a browser task with no address bar, how to open a URL, questions, and no made-up data. */
export function systemPrompt(tool: AnthropicTool, screen: ScreenSize): string {
  const unsupported =
    tool === COMPUTER_TOOLSET
      ? ''
      : `\n- These actions are not available here: ${WITHHELD_MEMBERS.join(', ')}. Clicks and scrolls take no ` +
        'modifier keys.';
  return [
    `You carry out the user's task in a web browser, using the computer tool. Each screenshot shows the browser's ` +
      `page only (${screen.width}x${screen.height} pixels); coordinates are pixels of that screenshot.`,
    '- There is no address bar, tab strip or desktop. To open a URL, make three actions in one turn: key "ctrl+l", ' +
      'type the URL, key "Return". To go back, key "alt+Left".',
    '- The page URL is given with each screenshot.',
    '- When you need something only the user can tell you (a choice, a missing detail, a confirmation), end your ' +
      'turn with a question to the user and no tool call. Never make up personal data (names, email addresses, ' +
      'phone numbers, addresses, payment details).',
    '- When the task is done, reply with the answer or a short summary and no tool call.' + unsupported,
  ].join('\n');
}
