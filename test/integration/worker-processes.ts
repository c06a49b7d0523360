// Worker processes for crash tests: each runs worker-process.ts against a harness's server, queue and runs folder,
// logs to a file in the harness folder, and is killed with SIGKILL when the test file ends.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { workflowBundle } from './harness';

/** Where the processes connect and write: a harness, or any server (e.g. a cluster) with a queue and a folder. */
export interface WorkerHost {
  dir: string;
  server: { address: string };
  config: { runsDir: string; taskQueue: string };
}

const WORKER_SCRIPT = path.resolve(__dirname, 'worker-process.ts');

export class WorkerProcesses {
  private readonly children = new Set<ChildProcess>();
  private bundlePath: string | undefined;

  constructor(private readonly h: () => WorkerHost) {}

  /**
   * Writes the workflow bundle once, so each process starts without bundling (for `config`: with its encryption or
   * tracing, whose processes get the matching settings through their env).
   */
  async prepare(config?: Parameters<typeof workflowBundle>[0]): Promise<void> {
    this.bundlePath = path.join(this.h().dir, 'workflow-bundle.js');
    fs.writeFileSync(this.bundlePath, (await workflowBundle(config)).code);
  }

  spawn(env: Record<string, string> = {}): ChildProcess {
    const h = this.h();
    if (!this.bundlePath) throw new Error('call prepare() before spawn()');
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', WORKER_SCRIPT], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: h.server.address,
        CUA_RUNS_DIR: h.config.runsDir,
        CUA_TASK_QUEUE: h.config.taskQueue,
        CUA_TEST_BUNDLE: this.bundlePath,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = fs.createWriteStream(this.logFile(child));
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  /** The file a process's output goes to. */
  logFile(child: ChildProcess): string {
    return path.join(this.h().dir, `worker-${child.pid}.log`);
  }

  /** SIGKILL, and resolves once the process is gone. */
  async kill(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  killAll(): void {
    for (const c of this.children) c.kill('SIGKILL');
  }
}
