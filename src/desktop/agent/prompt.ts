// The desktop agent's prompts, in our own words: the action model's system prompt (it reads a written description of
// the screen, never the image), the vision model's request for a description in a fixed four-part form (objective,
// screen, done or not, next step — listing what is visible before judging keeps weaker models steady), the reader of
// that form, and the grounding request that turns a described element into a pixel point.
import type { ChatMessage } from '../../model/client';
import { DEFAULT_COMMAND_TIMEOUT_S } from './tools';
import type { DesktopTool } from './tools';

export interface SystemPromptInput {
  width: number;
  height: number;
  tools: readonly Pick<DesktopTool, 'name' | 'description' | 'usage'>[];
}

/** The action model's system prompt. */
export function systemPrompt({ width, height, tools }: SystemPromptInput): string {
  const list = tools.map((t) => `- ${t.usage}: ${t.description}`).join('\n');
  return [
    `You control a Linux desktop computer with a ${width}×${height} pixel screen to carry out the user's objective.`,
    'You cannot see the screen. Each step you get a written description of it, made by a vision model, and your ' +
      'record so far: OBJECTIVE, THOUGHT (screen descriptions and your own reasoning), ACTION (the tools you called), ' +
      'OBSERVATION (what each call returned), USER (replies from the user) and NOTE (messages from the system).',
    '',
    'How to work:',
    '- Act by calling tools. You may call several in one step; they run one after the other in the order given, and ' +
      'each result comes back to you as an OBSERVATION. A failed call comes back as an error: read it and adjust.',
    '- For files, programs, packages and settings, prefer run_command to clicking through windows.',
    `- run_command stops a command after ${DEFAULT_COMMAND_TIMEOUT_S} seconds unless you give a longer timeout. ` +
      'Start long-running or graphical programs with run_background_command; their output goes to a log file that ' +
      'you can read with run_command.',
    '- Click by describing the target in words (query), e.g. "the Save button of the dialog"; it is located on the ' +
      'screen for you. Give x and y only when you know the exact pixel.',
    '- Call ask_user only when you need something only the user knows (a password, a personal choice, a missing ' +
      'detail), never to confirm routine steps.',
    '- When the objective is reached, call stop with the final answer (or a short report of what you did).',
    '',
    'Tools:',
    list,
  ].join('\n');
}

export interface DescribeInput {
  objective: string;
  /** The screenshot as a `data:` URL (or any URL the vision endpoint accepts). */
  screenshotDataUrl: string;
  /** What happened since the last look (e.g. the actions just taken), to help judge progress. */
  previous?: string;
}

const DESCRIBE_FORM = [
  'Answer in exactly four numbered parts, with these labels:',
  '1. Objective: the objective, restated in your own words.',
  '2. Screen: what is on the screen: each visible window (and which one has the focus), the text that can be read, ' +
    'and the buttons, fields, menus and icons one could use.',
  '3. Status: DONE or NOT DONE, judged only from what is visible, with the reason.',
  '4. Next: the single most useful next step toward the objective, or "nothing" when it is done.',
].join('\n');

/** The vision model's request: describe this screenshot in the four-part form. */
export function describeMessages({ objective, screenshotDataUrl, previous }: DescribeInput): ChatMessage[] {
  const context = previous?.trim() ? `\n\nSince the last screenshot: ${previous.trim()}` : '';
  return [
    {
      role: 'system',
      content:
        'You describe screenshots of a computer desktop for an agent that cannot see them. Be concrete and ' +
        'complete about what is visible; do not invent anything that is not on the screen.',
    },
    {
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: screenshotDataUrl } },
        { type: 'text', text: `The objective: ${objective}${context}\n\n${DESCRIBE_FORM}` },
      ],
    },
  ];
}

export interface Description {
  /** The description, trimmed, with any `<think>` section removed. */
  text: string;
  /** Whether the vision model judged the objective done; null when it did not clearly say. */
  done: boolean | null;
}

const STATUS_START = /^[\s>*#_-]*(?:3\s*[.):]\s*)?(?:status\b[\s*_]*:?)?/i;
const IS_STATUS = /^[\s>*#_-]*(?:3\s*[.):]|status\b)/i;
const NEXT_START = /^[\s>*#_-]*(?:4\s*[.):]|next\b)/i;
const NOT_DONE =
  /\b(?:not\s+(?:yet\s+)?(?:done|complete[d]?|finished|achieved|accomplished|reached|met)|incomplete|unfinished|(?:isn't|is\s+not|hasn't|has\s+not)\s+(?:yet\s+)?(?:been\s+)?(?:done|complete[d]?|finished|achieved|reached))\b/i;
const DONE = /\b(?:done|complete[d]?|finished|achieved|accomplished|reached)\b/i;
const VERDICT = /\b(?:objective|task|goal)\s+(?:is|was|has(?:\s+been)?)\s+(?:not\s+)?(?:yet\s+)?(?:been\s+)?\w+/gi;

function verdict(text: string): boolean | null {
  // A status that starts with its verdict is taken at its word ("DONE — though nothing was incomplete").
  if (/^[\W_]*not\s+done\b/i.test(text)) return false;
  if (/^[\W_]*done\b/i.test(text)) return true;
  if (NOT_DONE.test(text)) return false;
  return DONE.test(text) ? true : null;
}

/** The third part (status) of a description, up to the fourth; undefined when it has none. */
function statusPart(lines: readonly string[]): string | undefined {
  const start = lines.findIndex((l) => IS_STATUS.test(l));
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && NEXT_START.test(l));
  return lines.slice(start, end < 0 ? undefined : end).join(' ');
}

/** Reads a vision model's description: its text and its done / not done verdict (see Description). */
export function readDescription(raw: string): Description {
  const text = raw.replace(/^[\s\S]*<\/think\s*>/i, '').trim();
  const status = statusPart(text.split('\n'));
  if (status !== undefined) {
    const done = verdict(status.replace(STATUS_START, ''));
    if (done !== null) return { text, done };
  }
  // No usable status part: a sentence like "the objective is not yet done" anywhere.
  for (const m of text.matchAll(VERDICT)) {
    const done = verdict(m[0]);
    if (done !== null) return { text, done };
  }
  return { text, done: null };
}

export interface GroundingInput {
  screenshotDataUrl: string;
  /** The element, described in words. */
  query: string;
  /** Size in pixels of the screenshot sent (the point is asked for in this space). */
  width: number;
  height: number;
}

/** The grounding model's request: the pixel point of the described element in the screenshot. */
export function groundingMessages({ screenshotDataUrl, query, width, height }: GroundingInput): ChatMessage[] {
  return [
    {
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: screenshotDataUrl } },
        {
          type: 'text',
          text:
            `This screenshot is ${width}×${height} pixels. Locate this element: ${JSON.stringify(query)}.\n` +
            'Reply with only the pixel coordinates of its centre, as (x, y): x counted from the left edge, ' +
            'y from the top edge.',
        },
      ],
    },
  ];
}
