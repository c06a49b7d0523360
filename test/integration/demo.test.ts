// `npx cua demo` as a newcomer runs it: a child process on its own ports and data folder. Ctrl-C in the middle
// stops everything it started; a second run on the same data completes unattended (--yes), books on the demo
// site with the answered name, and prints the UI link and a trajectory report that shows every step.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright';
import { describe, expect, it } from 'vitest';
import { canConnect, freePort } from '../../src/infra/devserver';
import { CHROMIUM_ARGS } from '../../src/infra/chromium';
import { chromiumPath, PROJECT_ROOT } from '../../src/infra/paths';
import { EVENTS_FILE } from '../../src/trajectory/layout';

interface Demo {
  output: () => string;
  waitFor: (text: string, timeoutMs?: number) => Promise<void>;
  exit: Promise<number | null>;
  kill: (signal: NodeJS.Signals) => void;
}

function startDemo(args: string[], env: Record<string, string>): Demo {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'cua.js'), 'demo', ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (const l of listeners) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    output: () => out,
    exit,
    kill: (signal) => child.kill(signal),
    waitFor: (text, timeoutMs = 90_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!out.includes(text)) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`demo output never showed '${text}':\n${out}`));
        }, timeoutMs);
        listeners.add(check);
        void exit.then(() =>
          setTimeout(() => {
            check();
            if (listeners.delete(check)) {
              clearTimeout(timer);
              reject(new Error(`the demo exited before showing '${text}':\n${out}`));
            }
          }, 50),
        );
        check();
      }),
  };
}

describe('npx cua demo', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-demo-'));
  let ports: { port: number; uiPort: number };
  const args = () => ['--yes', '--port', String(ports.port), '--ui-port', String(ports.uiPort)];

  it('Ctrl-C in the middle of the task stops the task, the worker, the site, the model and the server', async () => {
    ports = { port: await freePort(), uiPort: await freePort() };
    const demo = startDemo(args(), { CUA_DATA_DIR: dataDir });
    await demo.waitFor('step   3 ·');
    demo.kill('SIGINT');
    expect(await demo.exit).toBe(130);
    expect(demo.output()).toContain('Ctrl-C: stopping everything the demo started');
    expect(demo.output()).toMatch(/cancelling task demo-/);
    expect(await canConnect('127.0.0.1', ports.port)).toBe(false);
    expect(await canConnect('127.0.0.1', ports.uiPort)).toBe(false);
  }, 150_000);

  it('a second run on the same data completes unattended and prints the UI link and the report', async () => {
    const demo = startDemo(args(), { CUA_DATA_DIR: dataDir });
    const code = await demo.exit;
    const out = demo.output();
    expect(code, out).toBe(0);
    // A line per step, the question answered by --yes, the answer, and the booking the site really recorded.
    for (let n = 1; n <= 14; n++) expect(out).toContain(`step ${String(n).padStart(3)} ·`);
    expect(out).toContain('The agent asks: ');
    expect(out).toMatch(/complete after 14 step\(s\)/);
    expect(out).toContain('answer: Booked a Standard double at Harbor View Lisbon for Ada Lovelace');
    expect(out).toMatch(
      /the demo site recorded a booking: TW-\d+ · Harbor View Lisbon · Standard double .* guest Ada Lovelace/,
    );
    expect(out).toContain('SCRIPTED STAND-IN');
    const link = /Temporal UI: (http:\/\/127\.0\.0\.1:(\d+)\/namespaces\/default\/workflows\/(demo-\S+))/.exec(out);
    expect(link?.[2]).toBe(String(ports.uiPort));
    // The web console's link (with its token) beside the Temporal UI's, and the task's console page at the end.
    expect(out).toMatch(/\[demo\] web console: http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/);
    expect(out).toContain(`web console: `);
    expect(out).toMatch(new RegExp(`web console: http://127\\.0\\.0\\.1:\\d+/tasks/${link?.[3]}`));
    // The line that adds the MCP server to a client, pointed at the demo's server and run folders.
    expect(out).toContain(
      `agents can start and follow tasks too (MCP, docs/mcp.md): claude mcp add durable-cua ` +
        `-e TEMPORAL_ADDRESS=127.0.0.1:${ports.port} -e CUA_RUNS_DIR=${path.join(dataDir, 'runs')} -- node `,
    );
    const report = /trajectory report \((\d+) steps\): (\S+)/.exec(out);
    expect(report?.[1]).toBe('14');
    const file = report?.[2] ?? '';
    expect(path.dirname(file)).toBe(path.join(dataDir, 'runs', link?.[3] ?? '?'));
    expect(await canConnect('127.0.0.1', ports.port)).toBe(false);

    // The report opens in Chromium and shows every step.
    const browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(file).href);
      await expect.poll(() => page.locator('section.step').count()).toBe(14);
      expect(await page.locator('section.step img').count()).toBeGreaterThanOrEqual(13);
      await expect.poll(() => page.textContent('body')).toContain('TW-');
    } finally {
      await browser.close();
    }
  }, 180_000);

  it('--family anthropic-computer books the same stay against the stand-in of the Messages API; the report shows its actions', async () => {
    ports ??= { port: await freePort(), uiPort: await freePort() };
    const demo = startDemo([...args(), '--family', 'anthropic-computer'], { CUA_DATA_DIR: dataDir });
    const code = await demo.exit;
    const out = demo.output();
    expect(code, out).toBe(0);
    expect(out).toContain('SCRIPTED STAND-IN of the anthropic-computer API');
    expect(out).toContain('The agent asks: ');
    // Anthropic's final turn is its text: what it saw, then the answer.
    expect(out).toMatch(/answer: [^]*Booked a Standard double at Harbor View Lisbon for Ada Lovelace/);
    expect(out).toMatch(
      /the demo site recorded a booking: TW-\d+ · Harbor View Lisbon · Standard double .* guest Ada Lovelace/,
    );
    const report = /trajectory report \((\d+) steps\): (\S+)/.exec(out);
    const html = fs.readFileSync(report?.[2] ?? '', 'utf8');
    expect(html).toContain('anthropic-computer');
    expect(html).toContain('The provider&#39;s action');
    expect(html).toContain('&quot;left_click&quot;');
  }, 180_000);

  it('--desktop runs the desktop agent unattended: editor, command, one question; the report shows the desktop', async () => {
    ports ??= { port: await freePort(), uiPort: await freePort() };
    const demo = startDemo(['--desktop', ...args()], { CUA_DATA_DIR: dataDir });
    const code = await demo.exit;
    const out = demo.output();
    expect(code, out).toBe(0);
    expect(out).toContain('The agent asks: The list has milk and eggs. What else should I add?');
    expect(out).toMatch(/complete after 6 step\(s\)/);
    expect(out).toContain('answer: notes.txt lists milk, eggs and bread.');
    // The editor really saved the typed list, and the reply was added by a command.
    expect(out).toContain("notes.txt in the desktop's home: Shopping list · milk · eggs · bread");
    const link = /Temporal UI: (http:\/\/127\.0\.0\.1:\d+\/namespaces\/default\/workflows\/(demo-desktop-\S+))/.exec(
      out,
    );
    expect(link?.[2]).toBeTruthy();
    const report = /trajectory report \((\d+) steps\): (\S+)/.exec(out);
    expect(report?.[1]).toBe('6');
    expect(await canConnect('127.0.0.1', ports.port)).toBe(false);

    // The report shows the desktop: one card per step, each with its screenshot, the environment in the header.
    const browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(report?.[2] ?? '').href);
      await expect.poll(() => page.locator('section.step').count()).toBe(6);
      expect(await page.locator('section.step img').count()).toBeGreaterThanOrEqual(6);
      const body = (await page.textContent('body')) ?? '';
      expect(body).toContain('desktop');
      expect(body).toContain('Mousepad');
    } finally {
      await browser.close();
    }
  }, 180_000);

  // The desktop agent's models in a provider's own API: tool use (Anthropic), function calling (Gemini).
  it.each([
    ['anthropic-computer', 'tool_use'],
    ['gemini-computer', 'STOP'],
  ])(
    '--desktop --family %s: the same desktop task, its models called in that API on its stand-in',
    async (family, finish) => {
      ports ??= { port: await freePort(), uiPort: await freePort() };
      const demo = startDemo(['--desktop', ...args(), '--family', family], { CUA_DATA_DIR: dataDir });
      const code = await demo.exit;
      const out = demo.output();
      expect(code, out).toBe(0);
      expect(out).toContain(`SCRIPTED STAND-IN of the ${family} API`);
      expect(out).toContain('The agent asks: The list has milk and eggs. What else should I add?');
      expect(out).toMatch(/complete after 6 step\(s\)/);
      expect(out).toContain("notes.txt in the desktop's home: Shopping list · milk · eggs · bread");
      // Every action output came back as the provider's own (its finish reason), its calls read from it.
      const id = /task (demo-desktop-\S+) started/.exec(out)?.[1] ?? '';
      const events = fs
        .readFileSync(findFile(dataDir, id, EVENTS_FILE), 'utf8')
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              id: string;
              type: string;
              metadata?: { tool_calls?: unknown[] };
              llm_conversation?: { messages: { finish_reason: string }[] };
            },
        );
      // A step's first call is its action event (ids …-action-g0); its other calls follow as …-g0-c1, ….
      const actions = events.filter((e) => e.type === 'action' && /-action-g\d+$/.test(e.id));
      expect(actions).toHaveLength(6);
      for (const a of actions) {
        expect(a.llm_conversation?.messages.at(-1)?.finish_reason).toBe(finish);
        expect(a.metadata?.tool_calls?.length).toBeGreaterThan(0);
      }
    },
    180_000,
  );
});

/** The file `name` in the folder named `id` somewhere under `dir`. */
function findFile(dir: string, id: string, name: string): string {
  for (const entry of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (entry.endsWith(path.join(id, name))) return path.join(dir, entry);
  }
  throw new Error(`no ${name} of ${id} under ${dir}`);
}
