// The control plane out of the agent's reach (real dev server with its Web UI, real Chromium, scripted model): a task
// whose model visits the Temporal Web UI, the codec server and the console of its own worker, as `cua dev` starts
// them, is refused by policy each time, reads the usual one-line refusal, and goes on to a page on another loopback
// port, which still loads. The refused servers never see a request.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTask, validateTaskInput } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { withControlPlane } from '../../src/runtime/control-plane';
import { startScriptedModelServer } from '../../src/scripted/server';
import type { ScriptedModelServer } from '../../src/scripted/server';
import { createWorkerRuntime } from '../../worker/main';
import { FAST_TIMING, workflowBundle } from './harness';
import type { Harness } from './harness';
import { useHarness } from './use-harness';

let h: Harness;
useHarness((x) => (h = x), { worker: false, ui: true });

/** A server that counts the requests it gets (a codec server the dev command was told about). */
async function countingServer(): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits += 1;
    res.end('decoded');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("the control plane is out of the agent's reach", () => {
  let model: ScriptedModelServer;
  let codec: Awaited<ReturnType<typeof countingServer>>;
  let stop: () => Promise<void>;
  const queue = () => `${h.config.taskQueue}-control-plane`;

  beforeAll(async () => {
    codec = await countingServer();
    const uiUrl = h.server.uiUrl ?? '';
    const frontendPort = new URL(`http://${h.server.address}`).port;
    const visit = (url: string) => ({ thoughts: `Open ${url}.`, action: { action: 'visit_url', url } });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-cp-scripts-'));
    fs.writeFileSync(
      path.join(dir, 'visit-control-plane.json'),
      JSON.stringify({
        description: 'A page steers the model to its own control plane, then on to the site (control-plane test).',
        entries: [
          visit(`${uiUrl}/namespaces/default/workflows`),
          visit(`http://localhost:${frontendPort}/`),
          visit(`${codec.url.replace('127.0.0.1', 'localhost')}/decode`),
          visit('http://[::1]:8300/'),
          visit(`${h.site.url}/`),
          { thoughts: 'Done.', action: { action: 'terminate', answer: 'went on' } },
        ],
      }),
    );
    model = await startScriptedModelServer({ scriptsDir: dir });
    // What `cua dev --ui-codec-endpoint URL` hands its worker.
    const config = withControlPlane({ ...h.config, taskQueue: queue() }, [uiUrl, codec.url]);
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const runtime = await createWorkerRuntime(config, { workflowBundle: await workflowBundle(), connection });
    const running = runtime.run().finally(() => connection.close());
    stop = async () => {
      await runtime.shutdown();
      await running;
    };
  }, 90_000);

  afterAll(async () => {
    await stop?.();
    await model?.close();
    await codec?.close();
  });

  it('refuses the Temporal UI, the frontend, the codec server and the console; the task goes on', async () => {
    const input = validateTaskInput({
      runId: `cp-${Date.now().toString(36)}`,
      instruction: 'Find the nightly price of the first hotel in Lisbon.',
      startUrl: `${h.site.url}/`,
      timing: FAST_TIMING,
      model: { endpoint: 'default', baseUrl: model.url, model: 'visit-control-plane' },
    });
    const handle = await startTask(h.client, queue(), input);
    const result = (await handle.result()) as TaskResult;
    expect(result).toMatchObject({ status: 'complete', answer: 'went on', steps: 6 });

    const told = model.requests.filter((r) => !r.subcall).map((r) => r.lastUserText);
    const ui = new URL(h.server.uiUrl ?? '');
    const frontendPort = new URL(`http://${h.server.address}`).port;
    const codecPort = new URL(codec.url).port;
    expect(told[1]).toMatch(new RegExp(`blocked by policy: .*denied \\(denyHosts 127\\.0\\.0\\.1:${ui.port}\\)`));
    expect(told[2]).toMatch(new RegExp(`blocked by policy: .*denied \\(denyHosts localhost:${frontendPort}\\)`));
    expect(told[3]).toMatch(new RegExp(`blocked by policy: .*denied \\(denyHosts localhost:${codecPort}\\)`));
    expect(told[4]).toMatch(/blocked by policy: .*denied \(denyHosts \[::1\]:8300\)/);
    expect(told[5]).not.toMatch(/blocked by policy/);
    expect(codec.hits()).toBe(0);
  }, 120_000);
});
