// Starting a desktop task in an integration test: fast timings, and the scripted model serving the named script.
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { startTask, validateTaskInput } from '../../client/tasks';
import type { TaskInputArgs } from '../../src/contract/task';
import { FAST_TIMING } from './harness';

/** Where a test's desktop tasks go: the client, the task queue, the scripted model's URL, and a task id prefix. */
export type DesktopTasks = { client: Client; taskQueue: string; modelUrl: string; prefix: string };

let counter = 0;

/** Starts a desktop task whose model is the script `scriptName` (10 steps at most unless `args` says otherwise). */
export function startDesktopTask(to: DesktopTasks, scriptName: string, args: Partial<TaskInputArgs> = {}) {
  const input = validateTaskInput({
    runId: `${to.prefix}-${Date.now().toString(36)}-${++counter}`,
    instruction: 'Leave a note in the home directory.',
    environment: 'desktop',
    timing: FAST_TIMING,
    maxSteps: 10,
    ...args,
    model: { endpoint: 'default', baseUrl: to.modelUrl, model: scriptName },
  });
  return startTask(to.client, to.taskQueue, input);
}

/** One tool call of a scripted desktop step. */
export type DesktopCall = { name: string; arguments: Record<string, unknown> };

/** Writes a scripted model's desktop script into `dir`: one entry per step, its tool calls in order; returns its name. */
export function writeDesktopScript(dir: string, name: string, steps: DesktopCall[][]): string {
  const entries = steps.map((tool_calls, i) => ({ content: `Step ${i + 1}.`, tool_calls }));
  fs.writeFileSync(path.join(dir, `${name}.json`), JSON.stringify({ entries }, null, 2));
  return name;
}
