// The chat UI-TARS-1.5 is sent each step, rebuilt from the neutral history, in the shape its own clients send
// (UI-TARS-desktop's SDK, the OSWorld agent): a first user message with the prompt and the task, then the first
// screenshot, then per model output the assistant's text, its boxes re-wrapped in `<|box_start|>`/`<|box_end|>` as
// the model saw them in training (README_deploy's add_box_token: the server drops the special tokens from the text it
// returns), and one user message with what followed: the person's reply and any text the step left (an error, the
// feedback after an invalid output) as text, then the screenshot after it. A batch's steps (`continues`) are one
// output: only the screenshot after its last action is sent. The newest `imagesKept` screenshots are sent (3 unless
// set); older ones are dropped, their text kept. No URL line and no step sentence: the model was trained without.
import type { ChatMessage } from '../../model/client';
import type { HistoryEntry, ImageLoader } from '../../model/context';
import { DEFAULT_MAX_IMAGES, truncateObservation } from '../../model/context';
import { promptWithInstruction } from './prompt';

type Observation = Extract<HistoryEntry, { kind: 'observation' }>;

/** One model output and what followed it: the observations of the steps it spanned, replies said after it. */
interface Turn {
  text: string;
  observations: Observation[];
  replies: string[];
}

/** A message before its screenshot is loaded. */
type Draft = { role: 'user'; texts: string[]; image?: string } | { role: 'assistant'; text: string };

const BOXED = /(start_box|end_box)=(['"])(?!<\|box_start\|>)([([][^'"()[\]]*[)\]])\2/g;

/** The output with each `start_box='(x,y)'` / `end_box='(x,y)'` (or a `[x1,y1,x2,y2]` box) wrapped in box tokens. */
export function withBoxTokens(text: string): string {
  return text.replace(BOXED, '$1=$2<|box_start|>$3<|box_end|>$2');
}

/** The person's words and the text a step left, as the model reads them. */
function textsOf(o: Observation): string[] {
  return [o.userReply ?? '', o.textObservation ? truncateObservation(o.textObservation) : ''].filter(Boolean);
}

function draftsOf(history: readonly HistoryEntry[]): Draft[] {
  const drafts: Draft[] = [];
  const turns: Turn[] = [];
  let pending: string[] = [];
  for (const entry of history) {
    const turn = turns[turns.length - 1];
    if (entry.kind === 'task') {
      drafts.push({ role: 'user', texts: [promptWithInstruction(entry.text)] });
      if (entry.screenshot !== undefined) drafts.push({ role: 'user', texts: [], image: entry.screenshot });
    } else if (entry.kind === 'assistant' && !entry.continues) {
      turns.push({ text: entry.text, observations: [], replies: [] });
    } else if (entry.kind === 'assistant') {
      continue;
    } else if (entry.kind === 'user_reply') {
      if (turn) turn.replies.push(entry.text);
      else pending.push(entry.text);
    } else if (turn) {
      turn.observations.push(entry);
    } else {
      drafts.push({ role: 'user', texts: [...pending, ...textsOf(entry)], image: entry.screenshot });
      pending = [];
    }
  }
  if (pending.length > 0) drafts.push({ role: 'user', texts: pending });
  for (const turn of turns) {
    if (turn.text.trim() !== '') drafts.push({ role: 'assistant', text: withBoxTokens(turn.text) });
    const last = turn.observations[turn.observations.length - 1];
    const texts = [...turn.observations.flatMap(textsOf), ...turn.replies];
    drafts.push({ role: 'user', texts, image: last?.screenshot });
  }
  return drafts;
}

/** Newest `kept` screenshots stay (0 or less: all); a user message left with nothing is dropped. */
function keepNewestImages(drafts: Draft[], kept: number): Draft[] {
  if (kept <= 0) return drafts;
  let seen = 0;
  const out: Draft[] = [];
  for (let i = drafts.length - 1; i >= 0; i--) {
    const draft = drafts[i];
    if (!draft) continue;
    if (draft.role === 'user' && draft.image !== undefined && ++seen > kept) {
      if (draft.texts.length > 0) out.push({ role: 'user', texts: draft.texts });
      continue;
    }
    if (draft.role === 'user' && draft.image === undefined && draft.texts.length === 0) continue;
    out.push(draft);
  }
  return out.reverse();
}

/** The step's chat (see the module comment). */
export async function uiTarsMessages(
  history: readonly HistoryEntry[],
  loadImage: ImageLoader,
  imagesKept: number | undefined,
): Promise<ChatMessage[]> {
  const drafts = keepNewestImages(draftsOf(history), imagesKept ?? DEFAULT_MAX_IMAGES);
  const messages: ChatMessage[] = [];
  for (const draft of drafts) {
    if (draft.role === 'assistant') {
      messages.push({ role: 'assistant', content: draft.text });
      continue;
    }
    const texts = draft.texts.map((text) => ({ type: 'text' as const, text }));
    const image =
      draft.image === undefined
        ? []
        : [{ type: 'image_url' as const, image_url: { url: await loadImage(draft.image) } }];
    messages.push({ role: 'user', content: [...texts, ...image] });
  }
  return messages;
}
