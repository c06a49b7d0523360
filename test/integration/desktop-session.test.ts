// A desktop session on a real Xvfb display, with openbox, xterm and xmessage in its sandbox: screenshots, typing and
// keys into a terminal, clicking a real button, shell commands (timeout, truncation, limits) and background jobs.
// One session is shared by the tests of this file; they run in order.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DesktopSession } from '../../src/desktop';
import {
  CommandTimeoutLimitError,
  CoordinateOutOfRangeError,
  UnknownKeyError,
  desktopSupport,
} from '../../src/desktop';
import { childRectangles, openSession, waitFor, windowGeometry } from '../fixtures/desktop/helpers';

const support = desktopSupport();
if (!support.ok) console.warn(`desktop tests skipped: missing ${support.missing.join(', ')} (${support.aptLine})`);

describe.skipIf(!support.ok)('DesktopSession', () => {
  let home: string;
  let session: DesktopSession;

  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'cua-desk-home-'));
    session = await openSession({ homeDir: home });
  });

  afterAll(async () => {
    await session?.close();
    await rm(home, { recursive: true, force: true });
  });

  /** Clicks into the xterm started at open, so keys and text go to its shell. */
  async function focusTerminal(): Promise<void> {
    const xterm = (await session.windows()).find((w) => w.title === 'xterm');
    expect(xterm, 'the xterm window').toBeDefined();
    const box = await windowGeometry(session.display, xterm?.id ?? '');
    await session.click(box.x + Math.round(box.width / 2), box.y + Math.round(box.height / 2));
  }

  const hostFile = (name: string) => (): Promise<string | undefined> =>
    readFile(path.join(home, name), 'utf8').catch(() => undefined);

  it('opens with the xterm window visible and takes 1280×800 PNG screenshots', async () => {
    expect(session.alive()).toBe(true);
    expect([session.width, session.height]).toEqual([1280, 800]);
    expect(session.display).toMatch(/^:\d+$/);
    expect((await session.windows()).map((w) => w.title)).toContain('xterm');

    const png = await session.screenshot();
    const meta = await sharp(png).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 1280, 800]);
  });

  it('types into the clicked xterm: the command runs and its file appears in the home on the host', async () => {
    await focusTerminal();
    await session.type('echo hello > typed.txt\n');
    expect(await waitFor(hostFile('typed.txt'), 'typed.txt in the home')).toBe('hello\n');
  });

  it('presses chords: ctrl+u clears the typed line before Enter runs the next one', async () => {
    await focusTerminal();
    await session.type('echo wrong > keyed.txt');
    await session.key('ctrl+u');
    await session.type('echo right > keyed.txt');
    await session.key('Enter');
    expect(await waitFor(hostFile('keyed.txt'), 'keyed.txt in the home')).toBe('right\n');
  });

  it('refuses unknown key names and points outside the screen', async () => {
    await expect(session.key('ctrl+frobnicate')).rejects.toBeInstanceOf(UnknownKeyError);
    await expect(session.key('ctrl+frobnicate')).rejects.toThrow(/Enter, Escape, Tab/);
    await expect(session.click(1280, 10)).rejects.toBeInstanceOf(CoordinateOutOfRangeError);
    await expect(session.drag(10, 10, 10, -1)).rejects.toThrow(/outside the 1280x800 screen/);
  });

  it('runs commands in the home, with stdout and stderr merged in order and the exit code', async () => {
    await writeFile(path.join(home, 'note.txt'), 'written on the host\n');
    const read = await session.runCommand('pwd; cat note.txt');
    expect(read).toMatchObject({ exitCode: 0, timedOut: false, truncated: false });
    expect(read.output).toBe('/home/user\nwritten on the host\n');

    const mixed = await session.runCommand('echo one; echo two >&2; echo three; exit 3');
    expect(mixed).toMatchObject({ exitCode: 3, output: 'one\ntwo\nthree\n' });
    expect((await session.runCommand('if then')).output).toMatch(/syntax error/i);
  });

  it('stops a command at its timeout, returns the output so far, and leaves no process behind', async () => {
    const started = Date.now();
    const result = await session.runCommand('echo started; sleep 31', { timeoutMs: 500 });
    expect(result).toMatchObject({ exitCode: null, timedOut: true, output: 'started\n' });
    expect(Date.now() - started).toBeLessThan(3000);

    const listing = await session.runCommand(`for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done`);
    expect(listing.output).toContain('openbox');
    expect(listing.output).not.toContain('sleep 31');
  });

  it('keeps the head and the tail of a long output', async () => {
    const result = await session.runCommand('seq 1 20000');
    expect(result.truncated).toBe(true);
    expect(result.output.startsWith('1\n2\n3\n')).toBe(true);
    expect(result.output.endsWith('19999\n20000\n')).toBe(true);
    const omitted = /\n\[… (\d+) characters omitted …\]\n/.exec(result.output);
    expect(Number(omitted?.[1])).toBe(108_894 - 4000);
  });

  it('refuses a per-call timeout above the maximum', async () => {
    await expect(session.runCommand('true', { timeoutMs: 120_001 })).rejects.toBeInstanceOf(CommandTimeoutLimitError);
    await expect(session.runCommand('true', { timeoutMs: 0 })).rejects.toThrow(/positive/);
  });

  it('runs background commands with numbered logs in the home that later commands can read', async () => {
    const first = await session.runBackground('echo from-background; sleep 0.2; echo finished');
    const second = await session.runBackground('echo second');
    expect(first.logFile).toMatch(/^\/home\/user\/\.background\/\d+\.log$/);
    expect(second.logFile).not.toBe(first.logFile);
    expect(first.pid).toBeGreaterThan(1);

    const log = await waitFor(async () => {
      const { output } = await session.runCommand(`cat ${first.logFile}`);
      return output.includes('finished') ? output : undefined;
    }, 'the background log');
    expect(log).toBe('from-background\nfinished\n');
    const onHost = path.join(home, path.relative('/home/user', first.logFile));
    expect(await readFile(onHost, 'utf8')).toBe(log);
  });

  it('clicks a real button: xmessage prints its label and exits', async () => {
    const { logFile } = await session.runBackground('xmessage -print -buttons Press:7 -geometry +400+300 hello');
    const dialog = await waitFor(
      async () => (await session.windows()).find((w) => w.title === 'xmessage'),
      'the xmessage window',
    );
    // The button is the lowest of the dialog's inner windows (the message sits above it).
    const inner = await childRectangles(session.display, dialog.id);
    const button = inner.reduce((low, r) => (r.y > low.y ? r : low));
    await session.click(button.x + Math.floor(button.width / 2), button.y + Math.floor(button.height / 2));

    await waitFor(
      async () => ((await session.runCommand(`cat ${logFile}`)).output === 'Press\n' ? true : undefined),
      'Press in the log',
    );
    await waitFor(
      async () => ((await session.windows()).some((w) => w.title === 'xmessage') ? undefined : true),
      'the xmessage window to close',
    );
  });
});
