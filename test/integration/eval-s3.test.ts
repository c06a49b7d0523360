// An evaluation with the S3 run store: a real `rclone serve s3` bucket is the harness's store (through a CUA_CONFIG
// file, the keys in the environment), and the task set itself is an object in that bucket (`cua eval store:KEY`): two
// rule-checked tasks of the shipped set and one judged task. Every verdict (rules and judge, the judge reading the
// screenshots from the bucket) is an object in the bucket and none is in the local runs folder; the report links each
// run's trajectory (copied out of the bucket).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evalCommand } from '../../cli/commands/eval';
import type { EvalCommandDeps } from '../../cli/commands/eval';
import type { EvalResultsFile } from '../../src/eval/results';
import { startS3Server } from '../../src/infra/rclone';
import type { S3Server } from '../../src/infra/rclone';
import { openRunStore } from '../../src/trajectory/open-store';
import { readRunFromStore } from '../../src/trajectory/reader';
import { verdicts } from './eval-expected';
import { FAST_TIMING, startHarness } from './harness';
import type { Harness } from './harness';

const ROOT = path.resolve(__dirname, '../..');
const SCRIPTS = path.join(ROOT, 'eval/scripts');
const PREFIX = 'cua/runs';

/** The lines of the shipped sets with these ids. */
function shippedTasks(ids: string[]): string {
  const lines = ['local.jsonl', 'judged.jsonl'].flatMap((f) =>
    fs.readFileSync(path.join(ROOT, 'eval/tasks', f), 'utf8').split('\n'),
  );
  return ids.map((id) => lines.find((l) => l.includes(`"id": "${id}"`)) ?? '').join('\n');
}

let s3: S3Server;
let h: Harness;
let tmp: string;
let bucket: string;
const KEYS = ['CUA_IT_EVAL_S3_KEY', 'CUA_IT_EVAL_S3_SECRET'] as const;

beforeAll(async () => {
  s3 = await startS3Server();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-eval-s3-'));
  bucket = await s3.createBucket('evals');
  // The worker in this process and the command both read the keys from the environment.
  process.env[KEYS[0]] = s3.accessKeyId;
  process.env[KEYS[1]] = s3.secretAccessKey;
  const store = {
    ...{ kind: 's3', endpoint: s3.endpoint, bucket, prefix: PREFIX },
    ...{ accessKeyIdEnv: KEYS[0], secretAccessKeyEnv: KEYS[1] },
  };
  const configFile = path.join(tmp, 'cua.config.json');
  fs.writeFileSync(configFile, JSON.stringify({ store }));
  h = await startHarness({ env: { CUA_CONFIG: configFile, CUA_PAGE_PROBES: '1' } });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await s3?.stop();
  for (const k of KEYS) delete process.env[k];
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('cua eval with the S3 run store', () => {
  const deps = (lines: string[]): EvalCommandDeps => ({
    config: h.config,
    client: h.client,
    print: (l) => lines.push(l),
    pollMs: 300,
    taskDefaults: { timing: FAST_TIMING },
  });

  it('refuses a task set key the bucket does not hold, in one line, before starting anything', async () => {
    const lines: string[] = [];
    expect(await evalCommand(['store:evalsets/nope.jsonl'], deps(lines))).toBe(2);
    expect(lines).toEqual([
      `error: task set store:evalsets/nope.jsonl: no such object in the run store (s3://evals/${PREFIX}/evalsets/nope.jsonl)`,
    ]);
  });

  it('reads the task set from the bucket and records every verdict there, not in the local runs folder', async () => {
    expect(h.config.store.kind).toBe('s3');
    const store = openRunStore(h.config);
    await store.writeAtomic(
      'evalsets/mixed.jsonl',
      shippedTasks(['fx-lisbon-price', 'fx-wrong-price', 'judged-lisbon-price']),
    );
    const out = path.join(tmp, 'out');
    const lines: string[] = [];
    const args = [
      'store:evalsets/mixed.jsonl',
      '--scripted',
      SCRIPTS,
      '--concurrency',
      '3',
      '--out',
      out,
      '--id',
      'eval-s3',
    ];
    expect(await evalCommand(args, deps(lines))).toBe(0);
    expect(lines).toContain('[eval] evaluation eval-s3 started: 3 task(s) × 1 trial(s), concurrency 3');
    expect(lines).toContain('[eval] success rate 66.7% (2/3 scored) · aborted 0 · pass@1 66.7% · mean 0.667');

    const results = JSON.parse(fs.readFileSync(path.join(out, 'eval-results.json'), 'utf8')) as EvalResultsFile;
    expect(results.taskSet).toBe('store:evalsets/mixed.jsonl');
    expect(verdicts(results)).toEqual({
      'fx-lisbon-price': 'pass',
      'fx-wrong-price': 'fail',
      'judged-lisbon-price': 'pass',
    });
    const runs = new Map(results.tasks.map((t) => [t.taskId, t.trials[0]!]));
    expect(runs.get('judged-lisbon-price')).toMatchObject({
      scoredBy: 'judge',
      judge: { verifier: 'webjudge', score: 1 },
    });

    const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    for (const [setTaskId, { runId: taskId }] of runs) {
      // One object per verdict under the run's prefix in the bucket (the judged task: the rules' null, the judge's 1).
      const objects = fs.readdirSync(path.join(s3.dir, bucket, PREFIX, taskId, 'verification'));
      expect(objects, setTaskId).toHaveLength(setTaskId.startsWith('judged-') ? 2 : 1);
      expect(fs.existsSync(path.join(h.runDir(taskId), 'verification.jsonl')), setTaskId).toBe(false);
      // The trajectory report, from the run copied out of the bucket.
      expect(html).toContain(`${taskId}/report.html"`);
      expect(fs.readFileSync(path.join(h.runDir(taskId), 'report.html'), 'utf8')).toContain('data:image/webp;base64,');
    }
    const verification = async (id: string) => (await readRunFromStore(store, runs.get(id)!.runId)).verification;
    expect((await verification('fx-lisbon-price')).eval_rules).toMatchObject({ score: 1 });
    expect((await verification('fx-wrong-price')).eval_rules).toMatchObject({ score: 0 });
    const judged = (await verification('judged-lisbon-price')).webjudge;
    expect(judged).toMatchObject({ score: 1, metadata: { reference_answer: 'Harbor View Lisbon, €120 per night' } });
    // The judge rated the run's screenshots, read from the bucket.
    expect((judged?.metadata as { screenshots: unknown[] }).screenshots.length).toBeGreaterThanOrEqual(3);
  }, 300_000);
});
