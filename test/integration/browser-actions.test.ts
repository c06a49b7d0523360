// Every action lands where intended (the fixture page records what it received), single-tab policy, key routing.
import { describe, expect, it } from 'vitest';
import { UnknownKeyError, adaptiveTypingDelay, normalizeChord, routeChord } from '../../src/browser';
import type { BrowserEnvironment, BrowserPool } from '../../src/browser';
import type { FixtureServer } from '../fixtures/browser/server';
import { useFixtureBrowser } from './use-fixture-browser';

type Recorded = { type: string; x?: number; y?: number; button?: number; detail?: number; buttons?: number } & {
  key?: string;
  ctrl?: boolean;
  shift?: boolean;
};

let server: FixtureServer;
let pool: BrowserPool;
let env: BrowserEnvironment;

const events = (): Promise<Recorded[]> =>
  env.page.evaluate(() => (window as unknown as { __events: Recorded[] }).__events);
const ofType = async (type: string): Promise<Recorded[]> => (await events()).filter((e) => e.type === type);

useFixtureBrowser((b) => ({ server, pool, env } = b), { slots: 2 });

describe('key names (pure)', () => {
  it.each([
    [['ctrl', 'A'], ['Control', 'a'], 'page'],
    [['Control', 'f'], ['Control', 'f'], 'find'],
    [['cmd', 'f'], ['ControlOrMeta', 'f'], 'find'],
    [['ctrl+shift+R'], ['Control', 'Shift', 'r'], 'refresh'],
    [['f5'], ['F5'], 'refresh'],
    [['alt', 'left'], ['Alt', 'ArrowLeft'], 'back'],
    [['ALT', 'right'], ['Alt', 'ArrowRight'], 'forward'],
    [['esc'], ['Escape'], 'page'],
    [['return'], ['Enter'], 'page'],
    [['pagedown'], ['PageDown'], 'page'],
    [['space'], [' '], 'page'],
    [['win'], ['Meta'], 'page'],
  ])('%j → %j routed to %s', (chord, normalized, route) => {
    expect(normalizeChord(chord)).toEqual(normalized);
    expect(routeChord(normalizeChord(chord))).toBe(route);
  });
});

describe('mouse actions land at the given viewport pixels', () => {
  it('left, double, right, triple and middle clicks', async () => {
    await env.visitUrl(server.url('/pages/events.html'));
    await env.leftClick(450, 150);
    expect(await ofType('click')).toEqual([{ type: 'click', x: 450, y: 150, button: 0, detail: 1 }]);

    await env.doubleClick(460, 160);
    expect(await ofType('dblclick')).toEqual([{ type: 'dblclick', x: 460, y: 160, button: 0, detail: 2 }]);

    await env.rightClick(470, 170);
    expect(await ofType('contextmenu')).toEqual([{ type: 'contextmenu', x: 470, y: 170, button: 2, detail: 0 }]);

    await env.tripleClick(480, 180);
    expect((await ofType('click')).at(-1)).toEqual({ type: 'click', x: 480, y: 180, button: 0, detail: 3 });

    await env.middleClick(490, 190);
    expect((await ofType('auxclick')).at(-1)).toMatchObject({ x: 490, y: 190, button: 1 });
  });

  it('mouse_move then left_click_drag drags from the pointer to the end point', async () => {
    await env.visitUrl(server.url('/pages/events.html'));
    await env.mouseMove(420, 120);
    await env.leftClickDrag(650, 260);
    expect(await ofType('mousedown')).toEqual([{ type: 'mousedown', x: 420, y: 120, button: 0, detail: 1 }]);
    expect((await ofType('mouseup')).at(-1)).toMatchObject({ x: 650, y: 260 });
    const dragging = (await ofType('mousemove')).filter((e) => e.buttons === 1);
    expect(dragging.at(-1)).toMatchObject({ x: 650, y: 260 });
  });

  it('scroll and hscroll move the page by pixels, and the page context says where the viewport is', async () => {
    await env.visitUrl(server.url('/pages/events.html'));
    await env.scroll(0, 500);
    await env.hscroll(300);
    expect(await env.page.evaluate(() => ({ x: window.scrollX, y: window.scrollY }))).toEqual({ x: 300, y: 500 });
    const context = await env.pageContext();
    expect(context).toContain(`Current URL: ${server.url('/pages/events.html')}`);
    expect(context).toMatch(/Viewport: scrolled to \d+% of page \(500-\d+px of 4000px\)/);
  });
});

describe('typing', () => {
  it.each<[string, string, number | undefined, number]>([
    ['short text, default delay', 'hello', undefined, 20],
    ['long text, default delay', 'x'.repeat(150), undefined, 10],
    ['short text, configured delay', 'hello', 100, 100],
    ['long text, configured slow delay: at most 10 ms', 'x'.repeat(150), 100, 10],
    ['long text, configured faster delay', 'x'.repeat(150), 4, 4],
    ['no delay', 'hello', 0, 0],
  ])('%s', (_name, text, configured, delay) => {
    expect(adaptiveTypingDelay(text, configured)).toBe(delay);
  });

  it('types at a point, replacing existing text, then presses Enter', async () => {
    await env.visitUrl(server.url('/pages/events.html'));
    await env.type('old', { at: { x: 100, y: 35 } });
    await env.type('new text', { at: { x: 100, y: 35 }, deleteExistingText: true, pressEnter: true });
    expect(await env.page.inputValue('#text')).toBe('new text');
    expect((await ofType('keydown')).at(-1)).toMatchObject({ key: 'Enter' });
    expect((await ofType('click')).at(-1)).toMatchObject({ x: 100, y: 35 });
  });

  it('typing into a debounced search box triggers its suggestions before the action returns', async () => {
    await env.visitUrl(server.url('/pages/search.html'));
    const outcome = await env.type('ap', { at: { x: 100, y: 35 } });
    expect(await env.page.locator('#suggestions li').allTextContents()).toEqual(['apple', 'apricot']);
    expect(outcome.settle.ms).toBeGreaterThan(0);
  });

  it.each([0, 100])('at %i ms per key every key reaches the page and the debounced search fires', async (delayMs) => {
    const { sessionId, env: typist } = await pool.openSession({
      viewport: { width: 1024, height: 768 },
      downloadsDir: '/tmp/cua-test-downloads',
      environment: { typingDelayMs: delayMs },
    });
    try {
      await typist.visitUrl(server.url('/pages/search.html'));
      const started = performance.now();
      await typist.type('apri', { at: { x: 100, y: 35 } });
      expect(performance.now() - started).toBeGreaterThanOrEqual(3 * delayMs);
      expect(await typist.page.inputValue('#q')).toBe('apri');
      expect(await typist.page.locator('#suggestions li').allTextContents()).toEqual(['apricot']);
    } finally {
      await pool.close(sessionId);
    }
  });
});

describe('key chords', () => {
  it('presses model key names on the page', async () => {
    await env.visitUrl(server.url('/pages/events.html'));
    await env.keys(['ctrl', 'B']);
    await env.keys(['pagedown']);
    await env.keys(['cmd', 'i']);
    const downs = await ofType('keydown');
    expect(downs.map((e) => e.key)).toEqual(['Control', 'b', 'PageDown', 'Control', 'i']);
    expect(downs[1]).toMatchObject({ ctrl: true });
    expect(downs[4]).toMatchObject({ ctrl: true, meta: false });
  });

  it('an unknown key is a typed error suggesting `type`, and held modifiers are released', async () => {
    await env.visitUrl(server.url('/pages/events.html'));
    const failure = env.keys(['ctrl', 'shift', 'notakey']);
    await expect(failure).rejects.toBeInstanceOf(UnknownKeyError);
    await expect(failure).rejects.toMatchObject({
      name: 'UnknownKeyError',
      message: expect.stringContaining('`type`'),
    });
    expect((await ofType('keyup')).map((e) => e.key)).toEqual(['Shift', 'Control']);
    await env.keys(['a']);
    expect((await ofType('keydown')).at(-1)).toMatchObject({ key: 'a', ctrl: false, shift: false });
  });

  it('Ctrl+R and F5 reload, Alt+Left goes back and Alt+Right forward', async () => {
    await env.visitUrl(server.url('/counter'));
    const count = (): Promise<string | null> => env.page.textContent('#count');
    const first = Number(await count());
    await env.keys(['ctrl', 'r']);
    expect(Number(await count())).toBe(first + 1);
    await env.keys(['F5']);
    expect(Number(await count())).toBe(first + 2);

    await env.visitUrl(server.url('/pages/target.html?from=one'));
    await env.visitUrl(server.url('/pages/target.html?from=two'));
    await env.keys(['alt', 'left']);
    expect(env.url()).toBe(server.url('/pages/target.html?from=one'));
    await env.keys(['Alt', 'ArrowRight']);
    expect(env.url()).toBe(server.url('/pages/target.html?from=two'));
  });

  it('Ctrl+F opens a find overlay: Enter highlights and cycles through matches, Esc clears', async () => {
    await env.visitUrl(server.url('/pages/find.html'));
    const overlay = (): Promise<{ count: string | null; highlights: number } | null> =>
      env.page.evaluate(() => {
        const host = document.getElementById('__cua_find_host');
        const registry = (CSS as unknown as { highlights: Map<string, { size: number }> }).highlights;
        const size = (name: string): number => registry.get(name)?.size ?? 0;
        return host
          ? {
              count: host.shadowRoot?.querySelector('[data-count]')?.textContent ?? null,
              highlights: size('cua-find') + size('cua-find-current'),
            }
          : null;
      });
    await env.keys(['ctrl', 'f']);
    await env.type('apple');
    await env.keys(['Enter']);
    expect(await overlay()).toEqual({ count: '1/3', highlights: 3 });
    await env.keys(['Enter']);
    expect(await overlay()).toMatchObject({ count: '2/3' });
    const scrolledTo = await env.page.evaluate(() => window.scrollY);
    expect(scrolledTo).toBeGreaterThan(500);
    await env.keys(['Enter']);
    await env.keys(['Enter']);
    expect(await overlay()).toMatchObject({ count: '1/3' });
    await env.keys(['Escape']);
    expect(await overlay()).toBeNull();
    expect(
      await env.page.evaluate(() => (CSS as unknown as { highlights: Map<string, unknown> }).highlights.size),
    ).toBe(0);
  });
});

describe('single-tab policy', () => {
  it('a target=_blank link opens in the one page', async () => {
    await env.visitUrl(server.url('/pages/links.html'));
    await env.leftClick(60, 35);
    expect(env.page.context().pages()).toHaveLength(1);
    expect(env.url()).toBe(server.url('/pages/target.html?from=blank'));
    expect(await env.page.textContent('#from')).toBe('from blank');
  });

  it('a window.open popup becomes the one active page', async () => {
    await env.visitUrl(server.url('/pages/links.html'));
    const outcome = await env.leftClick(60, 95);
    expect(outcome.popupAdopted).toBe(true);
    expect(env.page.context().pages()).toHaveLength(1);
    expect(env.url()).toBe(server.url('/pages/target.html?from=popup'));
    expect(await env.page.textContent('#from')).toBe('from popup');
  });
});
