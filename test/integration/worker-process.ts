// A worker in its own process, for crash tests and the resume benchmark: started by the test, killed with SIGKILL,
// replaced by another. Prints the worker's own lines as `cua worker` does, and READY_LINE once it polls.
// Env: TEMPORAL_ADDRESS, CUA_RUNS_DIR, CUA_TASK_QUEUE (as any worker), CUA_TEST_BUNDLE (prebuilt workflow code),
// and optionally CUA_TEST_HOLD="<point>:<step>" + CUA_TEST_MARKER=<file>: at that checkpoint the activity writes
// the marker file and then holds (the test kills the process while it holds).
import fs from 'node:fs';
import { loadConfig } from '../../src/runtime/config';
import { createWorkerRuntime, installWorkerLogging } from '../../worker/main';

export const READY_LINE = 'worker-process ready';

async function main(): Promise<void> {
  const config = loadConfig();
  installWorkerLogging('WARN', config.telemetry);
  const hold = process.env.CUA_TEST_HOLD;
  const marker = process.env.CUA_TEST_MARKER;
  const bundle = process.env.CUA_TEST_BUNDLE;
  const runtime = await createWorkerRuntime(config, {
    log: (line) => console.log(line),
    ...(bundle ? { workflowBundle: { codePath: bundle } } : {}),
    checkpoint: async (point, req) => {
      if (!hold || `${point}:${req.step}` !== hold || req.generation !== 0) return;
      if (marker) fs.writeFileSync(marker, `${point}:${req.step}:${process.pid}`);
      await new Promise(() => undefined); // hold until killed
    },
  });
  process.once('SIGTERM', () => void runtime.shutdown());
  const running = runtime.run();
  console.log(`${READY_LINE} ${runtime.sessionQueue}`);
  await running;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
