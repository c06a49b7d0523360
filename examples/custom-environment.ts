// A worker that hosts an environment of the application's own beside the browser: "kiosk", a screen on another
// machine that the application drives through its own control API (here a Chromium on that machine reached over
// CDP, with Playwright). Tasks name it with `environment: 'kiosk'`; the agent runs it like a browser (the same
// prompt, actions and records), closes it while a question waits, and opens it again at the same URL on the reply.
// The worker also registers an activity of the application's (for its own workflows on the same queue).
//
//   TEMPORAL_ADDRESS=127.0.0.1:7233 KIOSK_CDP=http://kiosk-7:9222 npx tsx examples/custom-environment.ts
// and then, from any client: agent.start({ instruction: '…', startUrl: 'https://…', environment: 'kiosk' })
import { chromium } from 'playwright';
import { runAgentWorker } from 'durable-cua/worker';
import type { CustomEnvironment, EnvironmentSession } from 'durable-cua/worker';

const kiosk: CustomEnvironment = {
  name: 'kiosk',
  async open({ url, screen }) {
    const browser = await chromium.connectOverCDP(process.env.KIOSK_CDP ?? 'http://127.0.0.1:9222');
    const context = await browser.newContext({ viewport: screen });
    const page = await context.newPage();
    if (url) await page.goto(url);
    const session: EnvironmentSession = {
      leftClick: (x, y) => page.mouse.click(x, y),
      doubleClick: (x, y) => page.mouse.dblclick(x, y),
      tripleClick: (x, y) => page.mouse.click(x, y, { clickCount: 3 }),
      rightClick: (x, y) => page.mouse.click(x, y, { button: 'right' }),
      mouseMove: (x, y) => page.mouse.move(x, y),
      async leftClickDrag(x, y) {
        await page.mouse.down();
        await page.mouse.move(x, y, { steps: 10 });
        await page.mouse.up();
      },
      async type(text, { pressEnter, deleteExistingText, at }) {
        if (at) await page.mouse.click(at.x, at.y);
        if (deleteExistingText) await page.keyboard.press('Control+A');
        await page.keyboard.type(text);
        if (pressEnter) await page.keyboard.press('Enter');
      },
      keys: (chord) => page.keyboard.press(chord.join('+')),
      scroll: (dx, dy) => page.mouse.wheel(dx, dy),
      visitUrl: async (to) => void (await page.goto(to)),
      historyBack: () => page.goBack(),
      wait: (seconds) => page.waitForTimeout(Math.min(seconds, 30) * 1000),
      pageMarkdown: () => page.innerText('body'),
      screenshot: () => page.screenshot({ type: 'png' }),
      url: () => page.url(),
      pageContext: async () => `Kiosk screen, current URL: ${page.url()}`,
      async close() {
        await context.close();
        await browser.close(); // disconnects; the kiosk's own Chromium keeps running
      },
    };
    return session;
  },
};

export async function main(): Promise<void> {
  await runAgentWorker({
    config: {
      temporal: { address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' },
      models: { default: { baseUrl: process.env.CUA_MODEL_BASE_URL ?? 'http://gpu-box:8000/v1', model: 'fara' } },
    },
    environments: [kiosk],
    // For the application's own workflows on the same task queue (a name of the agent's is refused).
    activities: { notifyOperator: async (text: string) => void console.log(`[operator] ${text}`) },
    log: (line) => console.log(`[agent worker] ${line}`),
  });
}

if (require.main === module) void main();
