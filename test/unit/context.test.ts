import { describe, it, expect } from 'vitest';
import {
  buildChatMessages,
  composeStepText,
  DEFAULT_NUDGE,
  estimateTextTokens,
  estimateTokens,
  historyEntrySchema,
  trimUrlForPrompt,
  truncateObservation,
  type BuildChatOptions,
  type ChatMessage,
  type HistoryEntry,
  type StepInput,
} from '../../src/model/context';
import { FARA_NAMES } from '../../src/actions/fara';
import { faraSpace } from '../../src/families/fara-common/spaces';

const LONG_PATH = `https://example.com/${'p'.repeat(200)}`;

describe('the step sentence', () => {
  it("is the Fara profiles' own, byte for byte (the models were trained on it)", () => {
    const trained = 'Here is the next screenshot. Think about what to do next.';
    expect(DEFAULT_NUDGE).toBe(trained);
    expect(FARA_NAMES.map((name) => faraSpace(name).stepPrompt)).toEqual([trained, trained]);
  });
});

describe('composeStepText', () => {
  it.each<[string, StepInput, string]>([
    ['plain nudge', { url: 'https://a.com/x' }, `Current URL: https://a.com/x\n${DEFAULT_NUDGE}`],
    ['no URL known', {}, DEFAULT_NUDGE],
    [
      'text observation + nudge',
      { url: 'https://a.com/', textObservation: 'The price is $5.' },
      `Current URL: https://a.com/\nThe price is $5.\n${DEFAULT_NUDGE}`,
    ],
    [
      'user reply, no nudge',
      { url: 'https://a.com/', userReply: 'Yes, book it.' },
      'Current URL: https://a.com/\nYes, book it.',
    ],
    ['reply wins over observation', { userReply: 'go on', textObservation: 'obs' }, 'go on'],
    [
      'query string stripped',
      { url: 'https://shop.com/s?q=shoes&utm_source=x' },
      `Current URL: https://shop.com/s\n${DEFAULT_NUDGE}`,
    ],
  ])('%s', (_name, step, expected) => {
    expect(composeStepText(step)).toBe(expected);
  });

  it('caps the URL at 100 characters, with no marker past the cap', () => {
    const line = composeStepText({ url: `${LONG_PATH}?a=1` }).split('\n')[0] ?? '';
    expect(line).toBe(`Current URL: ${LONG_PATH.slice(0, 100)}`);
  });

  it('truncates a long text observation', () => {
    const text = composeStepText({ textObservation: 'x'.repeat(3000) }, { maxObservationChars: 100 });
    expect(text).toContain('\n... [truncated 2900 chars] ...\n');
    expect(text.endsWith(DEFAULT_NUDGE)).toBe(true);
  });

  it('takes custom wording', () => {
    expect(composeStepText({ url: 'https://a.com' }, { nudge: 'Next?', urlLabel: 'URL:' })).toBe(
      'URL: https://a.com\nNext?',
    );
  });
});

describe('trimUrlForPrompt', () => {
  it.each<[string, number, string]>([
    ['https://a.com/p?x=1#frag', 100, 'https://a.com/p'],
    ['https://a.com/p#frag', 100, 'https://a.com/p#frag'],
    ['https://a.com/abcdef', 14, 'https://a.com/'],
    [LONG_PATH, 100, LONG_PATH.slice(0, 100)],
    [LONG_PATH.slice(0, 100), 100, LONG_PATH.slice(0, 100)], // exactly 100: untouched
  ])('%j (max %d) → %j', (url, max, expected) => {
    expect(trimUrlForPrompt(url, max)).toBe(expected);
  });
});

describe('truncateObservation', () => {
  it.each<[number, number, number]>([
    // [text length, limit, removed N]
    [1500, 1000, 500],
    [1001, 1000, 1],
    [3000, 100, 2900],
    [50, 9, 42], // odd limit: 4 + 4 kept
  ])('length %d, limit %d → marker N=%d', (length, limit, n) => {
    const text = Array.from({ length }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const out = truncateObservation(text, limit);
    const half = Math.floor(limit / 2);
    expect(out).toBe(`${text.slice(0, half)}\n... [truncated ${n} chars] ...\n${text.slice(-half)}`);
  });

  it('keeps text within the limit unchanged (default limit 1000)', () => {
    const text = 'y'.repeat(1000);
    expect(truncateObservation(text)).toBe(text);
    expect(truncateObservation(`${text}z`)).toContain('... [truncated 1 chars] ...');
  });
});

describe('estimateTokens', () => {
  it.each<[string, number]>([
    ['', 1],
    ['abc', 1],
    ['abcd', 2],
    ['x'.repeat(400), 101],
  ])('text %j → %d', (text, expected) => {
    expect(estimateTextTokens(text)).toBe(expected);
  });

  it('counts each image part as the image estimate and each text part by length', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'x'.repeat(40) }, // 11
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:' } },
          { type: 'text', text: 'abcd' },
        ],
      }, // 1500 + 2
      { role: 'assistant', content: 'ok' }, // 1
    ];
    expect(estimateTokens(messages)).toBe(1514);
    expect(estimateTokens(messages, 100)).toBe(114);
  });
});

// ---- buildChatMessages ----------------------------------------------------------------------

function recordingLoader() {
  const calls: string[] = [];
  return {
    calls,
    loadImage: async (ref: string) => {
      calls.push(ref);
      return `data:image/png;base64,${ref}`;
    },
  };
}

function options(extra: Partial<BuildChatOptions> = {}) {
  const loader = recordingLoader();
  return { loader, opts: { systemPrompt: 'SYSTEM', loadImage: loader.loadImage, ...extra } satisfies BuildChatOptions };
}

/** task (with screenshot s0) then `steps` (observation s_i, assistant a_i) pairs, then the current observation. */
function history(steps: number, extra: { replyBeforeStep?: number } = {}): HistoryEntry[] {
  const entries: HistoryEntry[] = [{ kind: 'task', text: 'Book a table for two', screenshot: 's0' }];
  entries.push({ kind: 'assistant', text: 'a0' });
  for (let i = 1; i <= steps; i++) {
    if (extra.replyBeforeStep === i) entries.push({ kind: 'user_reply', text: 'Friday at 8pm please' });
    entries.push({ kind: 'observation', screenshot: `s${i}`, url: `https://r.com/step${i}?id=${i}` });
    if (i < steps) entries.push({ kind: 'assistant', text: `a${i}` });
  }
  return entries;
}

const imageUrls = (messages: ChatMessage[]) =>
  messages.flatMap((m) =>
    m.role === 'user' ? m.content.flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : [])) : [],
  );
const texts = (messages: ChatMessage[]) =>
  messages.map((m) =>
    typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '<img>')).join('|'),
  );

describe('buildChatMessages', () => {
  it('starts with the system prompt and puts the image before the text', async () => {
    const { opts } = options();
    const messages = await buildChatMessages(history(1), opts);
    expect(messages[0]).toEqual({ role: 'system', content: 'SYSTEM' });
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: 'data:image/png;base64,s1' } },
        { type: 'text', text: `Current URL: https://r.com/step1\n${DEFAULT_NUDGE}` },
      ],
    });
  });

  it('keeps exactly the newest 3 of 5 screenshots and loads only those', async () => {
    const { opts, loader } = options();
    const messages = await buildChatMessages(history(4), opts); // s0..s4 = 5 screenshots
    expect(imageUrls(messages)).toEqual(['s2', 's3', 's4'].map((s) => `data:image/png;base64,${s}`));
    expect(loader.calls.sort()).toEqual(['s2', 's3', 's4']);
  });

  it('drops old step messages whole but keeps every assistant message and the task text', async () => {
    const { opts } = options();
    const all = texts(await buildChatMessages(history(4), opts));
    expect(all).toEqual([
      'SYSTEM',
      'Book a table for two', // task kept as text, screenshot dropped
      'a0',
      'a1', // step 1's message is gone
      `<img>|Current URL: https://r.com/step2\n${DEFAULT_NUDGE}`,
      'a2',
      `<img>|Current URL: https://r.com/step3\n${DEFAULT_NUDGE}`,
      'a3',
      `<img>|Current URL: https://r.com/step4\n${DEFAULT_NUDGE}`,
    ]);
  });

  it('honours maxImages, and 0 keeps every screenshot', async () => {
    expect(imageUrls(await buildChatMessages(history(4), options({ maxImages: 1 }).opts))).toHaveLength(1);
    expect(imageUrls(await buildChatMessages(history(4), options({ maxImages: 0 }).opts))).toHaveLength(5);
  });

  it('shows a recent user reply after the URL, in place of the nudge', async () => {
    const messages = await buildChatMessages(history(2, { replyBeforeStep: 2 }), options().opts);
    expect(texts(messages).at(-1)).toBe('<img>|Current URL: https://r.com/step2\nFriday at 8pm please');
  });

  it("keeps an old user reply as the reply's own words once its screenshot is dropped", async () => {
    const messages = await buildChatMessages(history(6, { replyBeforeStep: 2 }), options().opts);
    const all = texts(messages);
    expect(all).toContain('Friday at 8pm please');
    expect(all.join('\n')).not.toContain('step2');
    expect(imageUrls(messages)).toHaveLength(3);
  });

  it('accepts userReply set on the observation directly', async () => {
    const entries: HistoryEntry[] = [
      { kind: 'task', text: 'T' },
      { kind: 'observation', screenshot: 'old', userReply: 'use my work email' },
      { kind: 'assistant', text: 'a' },
      ...['x', 'y', 'z'].map((s): HistoryEntry => ({ kind: 'observation', screenshot: s })),
    ];
    expect(texts(await buildChatMessages(entries, options().opts))).toContain('use my work email');
  });

  it('sends a trailing reply with no observation after it as a text message', async () => {
    const entries: HistoryEntry[] = [
      { kind: 'task', text: 'T' },
      { kind: 'assistant', text: 'ask' },
      { kind: 'user_reply', text: 'blue' },
    ];
    expect(await buildChatMessages(entries, options().opts)).toEqual([
      { role: 'system', content: 'SYSTEM' },
      { role: 'user', content: [{ type: 'text', text: 'T' }] },
      { role: 'assistant', content: 'ask' },
      { role: 'user', content: [{ type: 'text', text: 'blue' }] },
    ]);
  });

  it('puts a truncated text observation in the current step', async () => {
    const entries: HistoryEntry[] = [
      { kind: 'task', text: 'T' },
      { kind: 'assistant', text: 'read' },
      { kind: 'observation', screenshot: 's', url: 'https://w.org/a?b', textObservation: 'q'.repeat(1200) },
    ];
    const last = texts(await buildChatMessages(entries, options().opts)).at(-1) ?? '';
    expect(last).toContain('Current URL: https://w.org/a\n');
    expect(last).toContain('... [truncated 200 chars] ...');
    expect(last.endsWith(DEFAULT_NUDGE)).toBe(true);
  });

  describe('token budget', () => {
    it('is off by default: a huge history is not trimmed beyond the screenshot count', async () => {
      const entries = history(30);
      const a = await buildChatMessages(entries, options().opts);
      const b = await buildChatMessages(entries, options({ maxImages: 3, tokenBudget: 0 }).opts);
      expect(a).toEqual(b);
      expect(a.filter((m) => m.role === 'assistant')).toHaveLength(30);
    });

    it('first strips screenshots oldest-first, keeping the newest and all text', async () => {
      const entries = history(4);
      const full = await buildChatMessages(entries, options().opts);
      const budget = estimateTokens(full) - 1500; // room for one image fewer
      const { opts, loader } = options({ tokenBudget: budget });
      const trimmed = await buildChatMessages(entries, opts);
      expect(imageUrls(trimmed)).toEqual(['s3', 's4'].map((s) => `data:image/png;base64,${s}`));
      expect(texts(trimmed).map((t) => t.replace('<img>|', ''))).toEqual(
        texts(full).map((t) => t.replace('<img>|', '')),
      );
      expect(loader.calls).not.toContain('s2');
    });

    it('under a tight budget keeps the task, the reply and the current step (with its screenshot)', async () => {
      const entries = history(8, { replyBeforeStep: 7 });
      const messages = await buildChatMessages(entries, options({ tokenBudget: 1 }).opts);
      expect(texts(messages)).toEqual([
        'SYSTEM',
        'Book a table for two',
        'Current URL: https://r.com/step7\nFriday at 8pm please',
        `<img>|Current URL: https://r.com/step8\n${DEFAULT_NUDGE}`,
      ]);
    });

    it('drops the oldest unprotected messages first', async () => {
      const entries = history(4);
      const full = await buildChatMessages(entries, options().opts);
      // All but the newest image stripped (−3000), then just enough room left to lose 'a0' only.
      const budget = estimateTokens(full) - 2 * 1500 - estimateTextTokens('a0');
      const messages = await buildChatMessages(entries, options({ tokenBudget: budget }).opts);
      expect(texts(messages).slice(0, 4)).toEqual([
        'SYSTEM',
        'Book a table for two',
        'a1',
        expect.stringContaining('step2'),
      ]);
    });
  });
});

describe('historyEntrySchema', () => {
  it('accepts each kind and rejects unknown fields', () => {
    for (const entry of history(2, { replyBeforeStep: 2 })) expect(historyEntrySchema.parse(entry)).toEqual(entry);
    expect(() => historyEntrySchema.parse({ kind: 'assistant', text: 'x', extra: 1 })).toThrow();
  });
});
