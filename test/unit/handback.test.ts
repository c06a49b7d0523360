// The hand-back note the model reads after a takeover (issue 26): how long, what changed, the person's note.
import { describe, expect, it } from 'vitest';
import { handbackNote, spokenDuration } from '../../src/agent/handback';

describe('spokenDuration', () => {
  it.each([
    [0, 'less than a second'],
    [400, 'less than a second'],
    [1_000, '1 s'],
    [45_000, '45 s'],
    [60_000, '1 min'],
    [125_000, '2 min 5 s'],
    [3_600_000, '1 h'],
    [3_780_000, '1 h 3 min'],
    [3_781_000, '1 h 3 min'],
    [-5, 'less than a second'],
  ])('%d ms → %s', (ms, spoken) => {
    expect(spokenDuration(ms)).toBe(spoken);
  });
});

describe('handbackNote', () => {
  const base = {
    durationMs: 125_000,
    urlBefore: 'https://shop.test/cart',
    titleBefore: 'Cart',
    urlAfter: 'https://shop.test/checkout/done',
    titleAfter: 'Order placed',
  };

  it.each([
    [
      'a changed page and a note',
      { ...base, note: 'I signed in and placed the order.' },
      'A person took over the browser for 2 min 5 s and handed it back. The page was https://shop.test/cart ("Cart") ' +
        'and is now https://shop.test/checkout/done ("Order placed"). Their note: I signed in and placed the order. ' +
        'Look at the new screenshot before going on.',
    ],
    [
      'no note',
      { ...base, note: '   ' },
      'A person took over the browser for 2 min 5 s and handed it back. The page was https://shop.test/cart ("Cart") ' +
        'and is now https://shop.test/checkout/done ("Order placed"). They left no note. ' +
        'Look at the new screenshot before going on.',
    ],
    [
      'the same page',
      { ...base, urlAfter: base.urlBefore, titleAfter: base.titleBefore, durationMs: 9_000 },
      'A person took over the browser for 9 s and handed it back. The page is still https://shop.test/cart ("Cart"); ' +
        'what they did on it may have changed it. They left no note. Look at the new screenshot before going on.',
    ],
    [
      'untitled and blank pages, a title over several lines',
      { ...base, urlBefore: '', titleBefore: '', titleAfter: 'Order\n\tplaced', note: null },
      'A person took over the browser for 2 min 5 s and handed it back. The page was a blank page and is now ' +
        'https://shop.test/checkout/done ("Order placed"). They left no note. Look at the new screenshot before going on.',
    ],
  ])('%s', (_name, facts, note) => {
    expect(handbackNote(facts)).toBe(note);
  });

  it('cuts a very long title', () => {
    const note = handbackNote({ ...base, titleAfter: 'x'.repeat(1_000) });
    expect(note).toContain(`("${'x'.repeat(199)}…")`);
  });
});
