// What a reply to the agent's question may be: the user's words, as text. Control characters (other than newlines
// and tabs) are removed, the text is trimmed, and it must be non-empty and at most MAX_REPLY_CHARS long, because a
// reply travels through workflow history (2 MB payload limit) and into every later prompt. Also the automatic reply
// of a task that replies to its own questions. Pure; used by the workflow (its update validator, the automatic reply)
// and by the client before it sends.

export const MAX_REPLY_CHARS = 10_000;

// C0 controls except \t and \n, DEL, C1 controls, and the Unicode line/paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u2028\u2029]/g;

export type CleanReply = { ok: true; text: string } | { ok: false; reason: string };

export function cleanReply(raw: unknown): CleanReply {
  if (typeof raw !== 'string') return { ok: false, reason: 'reply text must be a string' };
  const text = raw.replace(/\r\n?/g, '\n').replace(CONTROL, '').trim();
  if (text === '') return { ok: false, reason: 'reply text must not be empty' };
  if (text.length > MAX_REPLY_CHARS) {
    return { ok: false, reason: `reply text is too long (${text.length} characters; at most ${MAX_REPLY_CHARS})` };
  }
  return { ok: true, text };
}

/**
 * The automatic reply of a task with `autoReply: true`: a standing approval to go on, short of making anything up
 * (the original's fixed reply in its own-reply mode, in our words).
 */
export const STANDING_APPROVAL =
  'Please continue on your own; I approve whatever the task needs, as long as nothing you enter or report is made up.';

/** The text a task's `autoReply` replies to every question with: its own text, the standing approval, or none. */
export function autoReplyText(autoReply: string | boolean | undefined): string | undefined {
  if (autoReply === true) return STANDING_APPROVAL;
  return typeof autoReply === 'string' && autoReply !== '' ? autoReply : undefined;
}
