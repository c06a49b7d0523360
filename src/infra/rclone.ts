// rclone, built by scripts/rclone.sh into a cache outside the clone, and `rclone serve s3`: a real S3-compatible
// server over a local folder (each folder under it is a bucket; conditional puts work), for the shared run store's
// tests and bench. Not for production: point config `store` at AWS S3 or MinIO there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from './devserver';
import { startListening } from './listening-process';
import { rclonePath } from './build-cache';

export interface S3Server {
  /** e.g. http://127.0.0.1:41234 */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The folder served: each folder in it is a bucket. */
  dir: string;
  /** Create a bucket (through the S3 API: rclone caches its folder listing, so a folder made behind its back is unseen). */
  createBucket(name: string): Promise<string>;
  /** Stops the server and keeps its folder (an outage: connections are refused); `restart` brings it back. */
  kill(): Promise<void>;
  /** Starts the server again on the same port over the same folder (after `kill`), once it accepts connections. */
  restart(): Promise<void>;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

export class S3ServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Start `rclone serve s3` on a free 127.0.0.1 port over a fresh temp folder (removed by `stop`), with known keys,
 * and wait until it accepts connections.
 */
export async function startS3Server(
  opts: { accessKeyId?: string; secretAccessKey?: string; timeoutMs?: number } = {},
): Promise<S3Server> {
  const accessKeyId = opts.accessKeyId ?? 'cua-test-key';
  const secretAccessKey = opts.secretAccessKey ?? 'cua-test-secret';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-s3-'));
  const port = await freePort();
  const args = ['serve', 's3', dir, '--addr', `127.0.0.1:${port}`, '--auth-key', `${accessKeyId},${secretAccessKey}`];
  let server = await serve(args, port, opts.timeoutMs ?? 15_000).catch((err: unknown) => {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const stop = async () => {
    await server.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId,
    secretAccessKey,
    dir,
    async createBucket(name) {
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'; // see S3RunStore's constructor
      const client = new S3Client({
        region: 'us-east-1',
        endpoint: `http://127.0.0.1:${port}`,
        forcePathStyle: true,
        credentials: { accessKeyId, secretAccessKey },
      });
      try {
        await client.send(new CreateBucketCommand({ Bucket: name }));
      } finally {
        client.destroy();
      }
      return name;
    },
    kill: () => server.kill(),
    async restart() {
      await server.kill();
      server = await serve(args, port, opts.timeoutMs ?? 15_000);
    },
    stop,
  };
}

/** One `rclone serve s3` process, once it accepts connections on `port`. */
async function serve(args: string[], port: number, timeoutMs: number): Promise<{ kill(): Promise<void> }> {
  // Its own empty config: a developer's rclone.conf (remotes, passwords) has no business here.
  const served = await startListening(rclonePath(), [...args, '--config', '/dev/null', '--log-level', 'ERROR'], {
    ports: [port],
    timeoutMs,
    pollMs: 50,
    tailChars: 2000,
    failure: (stderr) =>
      new S3ServerError(`rclone serve s3 did not start on 127.0.0.1:${port}: ${stderr || 'no output'}`),
  });
  return { kill: served.stop };
}
