// Takes the console guide's pictures (docs/console.md) of the web console (docs/images/console-list.png, console-task.png): a real dev
// server, worker and scripted model (the test harness), a few tasks — one started as the console's form starts it on
// a priced endpoint, one waiting for a reply, a fork, one running — and the console in Chromium.
// `npx tsx scripts/console-screenshots.ts`
import path from 'node:path';
import { chromium } from 'playwright';
import { AgentClient } from '../client/client';
import { newTaskOf } from '../client/new-task';
import { startConsole } from '../console/server';
import { CHROMIUM_ARGS } from '../src/infra/chromium';
import { chromiumPath } from '../src/infra/paths';
import { openRunStore } from '../src/trajectory/open-store';
import { startHarness, untilWaiting } from '../test/integration/harness';

const OUT = path.resolve(__dirname, '..', 'docs', 'images');
const TOKEN = 'console-screenshots-token-0123456789';

async function main(): Promise<void> {
  const h = await startHarness({ worker: false });
  h.config.models = { 'fara-scripted': { baseUrl: h.model.url, model: 'book-lisbon', price: { input: 2, output: 8 } } };
  await h.startWorker();
  const agent = new AgentClient(h.client, h.config.taskQueue, () => openRunStore(h.config));
  const server = await startConsole({
    agent,
    store: () => openRunStore(h.config),
    token: TOKEN,
    port: 0,
    temporalUiUrl: 'http://127.0.0.1:8233',
    endpoints: Object.keys(h.config.models),
  });
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
  try {
    const task = newTaskOf({
      instruction: 'Find the nightly price of the first hotel in Lisbon.',
      startUrl: `${h.site.url}/`,
      endpoint: 'fara-scripted',
    });
    const { id } = await agent.start(task);
    await agent.result(id);
    const fork = await agent.fork(id, { step: 2, hint: 'The first result is the hotel.' });
    await agent.result(fork.id);
    await untilWaiting(await h.start({ script: 'ask-city', instruction: 'Search hotels in the city I name.' }));
    await h.start({ script: 'book-lisbon-slow', instruction: 'Book the cheapest hotel in Lisbon for two nights.' });

    const page = await browser.newPage({ viewport: { width: 1400, height: 760 } });
    await page.goto(`${server.url}/?token=${TOKEN}`);
    await page.locator(`#tasks tr[data-id="${fork.id}"] td.cost`, { hasText: '$' }).waitFor();
    await page.click('#start-box summary');
    await page.screenshot({ path: path.join(OUT, 'console-list.png') });
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.goto(`${server.url}/tasks/${id}`);
    await page.locator('#status', { hasText: 'complete' }).waitFor();
    await page.locator('#live', { hasText: 'ended' }).waitFor();
    await page.locator('#shot').evaluate((img: HTMLImageElement) => img.decode());
    await page.click('#steps li[data-step="2"] button.fork-step[data-what="fork"]');
    await page.fill('#fork-hint', 'The first result is the hotel.');
    await page.screenshot({ path: path.join(OUT, 'console-task.png') });
    console.log(`wrote ${path.join(OUT, 'console-list.png')} and console-task.png`);
  } finally {
    await browser.close();
    await server.close();
    await h.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
