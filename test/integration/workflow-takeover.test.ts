// A takeover and its handback on the real dev server and Chromium (issue 26): the takeover begins after the step
// under way, the test drives the page over the lease's socket as a person would (a click, typed text, Enter), the
// handback resumes the agent, and its next prompt says that a person had the browser, for how long, what changed
// (URL and title) and their note; stale and bad requests are refused in one line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handBackTask, pauseTask, sayToTask, takeOverTask } from '../../client/control';
import { ControlRefusedError } from '../../client/errors';
import { statusQuery } from '../../workflows/messages';
import type { TaskResult } from '../../src/contract/task';
import { readRun } from '../../src/trajectory/reader';
import { startFixtureServer } from '../fixtures/browser/server';
import type { FixtureServer } from '../fixtures/browser/server';
import { eventually, startHarness } from './harness';
import type { Harness } from './harness';
import { Viewer, isFrame } from './takeover-viewer';
import type { ServerMessage } from '../../src/browser/takeover/protocol';

type Frame = Extract<ServerMessage, { type: 'frame' }>;

let h: Harness;
let pages: FixtureServer;

beforeAll(async () => {
  h = await startHarness();
  pages = await startFixtureServer();
  pages.route('/search', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<title>Search form</title><form action="/results">' +
        '<input id="q" name="q" style="position:absolute;left:40px;top:40px;width:300px;height:40px"></form>',
    );
  });
  pages.route('/results', (_req, res, url) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<title>Results for ${url.searchParams.get('q') ?? ''}</title><p>results`);
  });
}, 120_000);

afterAll(async () => {
  await pages?.close();
  await h?.close();
});

const refused = async (work: Promise<unknown>): Promise<string> => {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ControlRefusedError);
  return (err as Error).message;
};

describe('take over and hand back', () => {
  it('a person drives the page over the lease; the agent is told what changed', async () => {
    const handle = await h.start({
      script: 'takeover-search',
      instruction: 'Search for kettles.',
      startUrl: pages.url('/search'),
    });
    const id = handle.workflowId;
    expect(await refused(handBackTask(h.client, id))).toBe(`task ${id} is not taken over (status: running)`);
    await eventually(async () => (await handle.query(statusQuery)).step === 1, 30_000, 'step 1');
    const lease = await takeOverTask(h.client, id);
    expect(lease.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/takeover\/lease-1-1\?token=/);
    const status = await handle.query(statusQuery);
    expect(status).toMatchObject({ status: 'taken_over', takeover: { leaseId: 'lease-1-1' } });
    expect(await refused(takeOverTask(h.client, id))).toMatch(/is taken over by a person: hand it back/);
    expect(await refused(pauseTask(h.client, id))).toMatch(/is taken over by a person/);
    expect(await refused(handBackTask(h.client, id, { leaseId: 'lease-0-9' }))).toBe(
      'stale handback: lease lease-0-9 is not the current lease (lease-1-1)',
    );

    // The person: a frame, a click in the field, text, Enter.
    const socket = lease.url.replace(/^http/, 'ws').replace('?token=', '/ws?token=');
    const viewer = await Viewer.open(socket);
    await viewer.next(isFrame);
    expect(await viewer.send({ type: 'mouse', action: 'down', x: 100, y: 60 })).toMatchObject({ type: 'done' });
    await viewer.send({ type: 'mouse', action: 'up', x: 100, y: 60 });
    await viewer.send({ type: 'text', text: 'kettles' });
    await viewer.send({ type: 'key', action: 'press', key: 'Enter' });
    await viewer.next((m): m is Frame => isFrame(m) && m.title === 'Results for kettles');
    await sayToTask(h.client, id, 'Thanks for waiting.');
    await viewer.close();

    expect(await handBackTask(h.client, id, { note: 'I searched for kettles.', leaseId: lease.leaseId })).toMatchObject(
      {
        accepted: true,
      },
    );
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete', answer: 'searched' });
    const prompt = h.model.requests.filter((r) => r.script === 'takeover-search' && !r.subcall).at(-1)?.lastUserText;
    expect(prompt).toMatch(/A person took over the browser for .* and handed it back\./);
    expect(prompt).toContain('/results');
    expect(prompt).toContain('("Results for kettles")');
    expect(prompt).toContain('Their note: I searched for kettles.');
    expect(prompt).toContain('The user says: Thanks for waiting.');
    const note = (await readRun(h.runDir(id))).events.find((e) => e.id === 'step-0002-handback-g0');
    expect(note?.metadata).toMatchObject({
      note: 'handback',
      lease_id: 'lease-1-1',
      title_after: 'Results for kettles',
    });
  }, 120_000);
});
