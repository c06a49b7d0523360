// Smoke test: the pinned Temporal dev server runs a workflow through a real worker, and Playwright drives
// Debian's Chromium to screenshot a local page. If this fails, nothing else can work.
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { describe, it, expect } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { chromium } from 'playwright';
import sharp from 'sharp';
import { chromiumPath, temporalCliPath } from '../../src/infra/paths';
import { CHROMIUM_ARGS } from '../../src/infra/chromium';

describe('smoke: real pieces start', () => {
  it('runs a workflow on the Temporal CLI dev server through a real worker', async () => {
    const env = await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: 'existing-path', path: temporalCliPath() }, ip: '127.0.0.1' },
    });
    try {
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue: 'smoke',
        workflowsPath: path.resolve(__dirname, '../fixtures/workflows/smoke.ts'),
        activities: { greet: async (name: string) => `hello, ${name}` },
      });
      const result = await worker.runUntil(
        env.client.workflow.execute('smokeWorkflow', { taskQueue: 'smoke', workflowId: 'smoke-1', args: ['temporal'] }),
      );
      expect(result).toBe('hello, temporal');
    } finally {
      await env.teardown();
    }
  });

  it('screenshots a local page in Debian Chromium', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body style="margin:0;background:rgb(255,0,0)"><h1>smoke</h1></body></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
    try {
      const page = await browser.newPage({ viewport: { width: 640, height: 400 } });
      await page.goto(`http://127.0.0.1:${port}/`);
      const png = await page.screenshot();
      const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height]).toEqual([640, 400]);
      const bottomRight = (info.height - 1) * info.width * info.channels + (info.width - 1) * info.channels;
      expect([data[bottomRight], data[bottomRight + 1], data[bottomRight + 2]]).toEqual([255, 0, 0]);
    } finally {
      await browser.close();
      server.close();
    }
  });
});
