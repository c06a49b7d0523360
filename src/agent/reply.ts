// What a reply to the agent's question may be: the user's words, as text. Control characters (other than newlines
// and tabs) are removed, the text is trimmed, and it must be non-empty and at most MAX_REPLY_CHARS long, because a
// reply travels through workflow history (2 MB payload limit) and into every later prompt. Pure; used by the
// workflow's update validator and by the client before it sends.

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
