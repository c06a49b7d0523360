// A real Prometheus (Debian's `prometheus` package, installed by scripts/setup.sh) for metrics tests: scrapes the
// given targets every second into its own folder, on a free loopback port; queried through its HTTP API.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/infra/devserver';

export interface Prometheus {
  url: string;
  /** An instant query's samples (`/api/v1/query`): each one's labels and value. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  stop(): Promise<void>;
}

function prometheusBinary(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('prometheus is not installed: run scripts/setup.sh (or apt-get install -y prometheus)');
  }
}

/** Starts Prometheus scraping `targets` (host:port) every second; resolves once it is ready. */
export async function startPrometheus(dir: string, targets: string[]): Promise<Prometheus> {
  const binary = prometheusBinary();
  fs.mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(
    configFile,
    [
      'global:',
      '  scrape_interval: 1s',
      'scrape_configs:',
      '  - job_name: cua-worker',
      '    static_configs:',
      `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', fs.openSync(path.join(dir, 'prometheus.log'), 'w')] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}); see ${dir}/prometheus.log`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`prometheus not ready in 30 s; see ${dir}/prometheus.log`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== 'success') throw new Error(`prometheus query ${expr}: ${body.error ?? res.status}`);
      return (body.data?.result ?? []).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
