// How much a decide step's history read costs from the S3 store compared with the folder store (issue 16's target:
// ≤ 30 ms more at p50). Against a real `rclone serve s3` on this machine (scripts/rclone.sh builds it). What is timed:
// bench/store-read.ts. The bench's scale-out section measures the same (`npm run bench -- --only scale-out`).
//
//   npx tsx scripts/bench-store.ts [--steps 40] [--warmup 5]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { measureStoreRead, p50, p90 } from '../bench/store-read';
import { startS3Server } from '../src/infra/rclone';
import { S3RunStore } from '../src/trajectory/s3-store';
import { LocalRunStore } from '../src/trajectory/store';

const { values } = parseArgs({ options: { steps: { type: 'string' }, warmup: { type: 'string' } } });
const STEPS = Number(values.steps ?? 40);
const WARMUP = Number(values.warmup ?? 5);

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-bench-store-'));
  const server = await startS3Server();
  try {
    const bucket = await server.createBucket('runs');
    const s3 = () =>
      new S3RunStore({
        bucket,
        prefix: 'bench',
        endpoint: server.endpoint,
        credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      });
    const folder = await measureStoreRead('folder', new LocalRunStore(dir), new LocalRunStore(dir), STEPS, WARMUP);
    const bucketTimes = await measureStoreRead('s3', s3(), s3(), STEPS, WARMUP);
    const row = (label: string, xs: number[]) =>
      `${label.padEnd(8)} p50 ${p50(xs).toFixed(1).padStart(6)} ms   p90 ${p90(xs).toFixed(1).padStart(6)} ms`;
    console.log(
      `decide step's history read, ${STEPS} steps (after ${WARMUP} warm-up), 4 events + 2 screenshots a step`,
    );
    console.log(row('folder', folder));
    console.log(row('s3', bucketTimes));
    const extra = p50(bucketTimes) - p50(folder);
    console.log(`s3 − folder at p50: ${extra.toFixed(1)} ms (target ≤ 30 ms: ${extra <= 30 ? 'met' : 'NOT met'})`);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
