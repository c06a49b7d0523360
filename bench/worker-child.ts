// A worker in its own process, for the resume section's kill -9: the usual worker runtime with a prebuilt workflow
// bundle (BENCH_BUNDLE) and an optional hold point (BENCH_HOLD="<point>:<step>"): there the activity writes
// BENCH_MARKER and waits, so the benchmark can kill the process at a known moment. Prints a line when polling.
import fs from 'node:fs';
import { loadConfig } from '../worker/config';
import { createWorkerRuntime } from '../worker/main';
import { installQuietRuntime } from './context';

export const READY_LINE = 'bench-worker ready';

async function main(): Promise<void> {
  installQuietRuntime();
  const hold = process.env.BENCH_HOLD;
  const marker = process.env.BENCH_MARKER;
  const bundle = process.env.BENCH_BUNDLE;
  const runtime = await createWorkerRuntime(loadConfig(), {
    ...(bundle ? { workflowBundle: { codePath: bundle } } : {}),
    checkpoint: async (point, req) => {
      if (!hold || `${point}:${req.step}` !== hold || req.generation !== 0) return;
      if (marker) fs.writeFileSync(marker, `${point}:${req.step}:${process.pid}`);
      await new Promise(() => undefined); // hold until killed
    },
  });
  process.once('SIGTERM', () => void runtime.shutdown());
  const running = runtime.run();
  console.log(READY_LINE);
  await running;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
