// Temporal connections (client and worker) from the configuration: local dev server, a cluster, or Temporal Cloud.
// Shared by the worker and the CLI, so neither reaches into the other's folder.
import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import type { ClientInterceptors, ConnectionOptions } from '@temporalio/client';
import type * as ClientInterceptor from '@temporalio/interceptors-opentelemetry/lib/client';
import { startTracing } from '../telemetry/tracing';
import type { DataConverter } from '@temporalio/common';
import type { Config } from './config';
import { dataConverterFor } from '../codec/data-converter';
import { sleep } from '../common/sleep';

export function connectionOptions(config: Config): ConnectionOptions {
  const { address, apiKey, tls } = config.temporal;
  const read = (p: string | undefined) => (p ? fs.readFileSync(p) : undefined);
  const clientCert = read(tls?.clientCertPath);
  const clientKey = read(tls?.clientKeyPath);
  return {
    address,
    ...(apiKey ? { apiKey } : {}),
    ...(tls || apiKey
      ? {
          tls: {
            serverNameOverride: tls?.serverName,
            serverRootCACertificate: read(tls?.serverRootCACertPath),
            ...(clientCert && clientKey ? { clientCertPair: { crt: clientCert, key: clientKey } } : {}),
          },
        }
      : {}),
  };
}

export class TemporalUnreachableError extends Error {
  constructor(address: string, cause: unknown) {
    super(
      `cannot reach the Temporal server at ${address}; start one with \`npx cua server\` (or set TEMPORAL_ADDRESS)`,
      { cause },
    );
    this.name = new.target.name;
  }
}

/** The longest pause between two attempts to reach a server that is not up yet. */
const MAX_CONNECT_BACKOFF_MS = 10_000;

/**
 * Runs `connect` until the Temporal server at `address` answers, retrying with backoff (1 s doubling to 10 s) while
 * it throws TemporalUnreachableError; one line when it starts waiting and one when it got through. Process managers
 * start services in any order: the worker, the console and any long-running command wait this one way. Other
 * errors (bad TLS files, say) are not retried; an aborted `signal` ends the wait with the last error.
 */
export async function untilReachable<T>(
  address: string,
  connect: () => Promise<T>,
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<T> {
  const started = Date.now();
  let pause = 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      const connected = await connect();
      if (attempt > 1) {
        log(`connected to the Temporal server at ${address} after ${Math.round((Date.now() - started) / 1000)}s`);
      }
      return connected;
    } catch (err) {
      if (!(err instanceof TemporalUnreachableError)) throw err;
      if (signal?.aborted) throw err;
      if (attempt === 1) {
        const why = err.cause instanceof Error ? err.cause.message.split('\n')[0] : String(err.cause);
        log(`the Temporal server at ${address} is not reachable yet (${why}); retrying until it is (Ctrl-C to stop)`);
      }
    }
    await sleep(pause, signal);
    pause = Math.min(MAX_CONNECT_BACKOFF_MS, pause * 2);
  }
}

/**
 * A client for the configuration: with `encryption`, its payloads and failure messages go through the codec.
 * `dataConverter`: one of the caller's own instead (the web console's reads what it has no key for as a placeholder).
 */
export async function connectClient(config: Config, dataConverter?: DataConverter): Promise<Client> {
  // Before connecting: a key error is the one to report. Clients read plaintext payloads whatever the setting.
  dataConverter ??= dataConverterFor(config, { acceptPlaintext: true });
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...connectionOptions(config), connectTimeout: '5s' });
  } catch (err) {
    throw new TemporalUnreachableError(config.temporal.address, err);
  }
  const interceptors = clientTracing(config);
  return new Client({
    connection,
    namespace: config.temporal.namespace,
    ...(dataConverter ? { dataConverter } : {}),
    ...(interceptors ? { interceptors } : {}),
  });
}

/**
 * With `telemetry.traces`: the OpenTelemetry client interceptor, so starting a task (and signalling, updating,
 * cancelling it) is a span whose context the task's workflow continues; the process's tracing starts with it and is
 * flushed before the process exits. Undefined (nothing started) when tracing is off.
 */
function clientTracing(config: Config): ClientInterceptors | undefined {
  const settings = config.telemetry?.traces;
  if (!settings) return undefined;
  const { tracer } = startTracing(settings);
  // Loaded only now, like the SDK (src/telemetry/tracing.ts): a command with tracing off does not pay for it.
  const { OpenTelemetryWorkflowClientInterceptor } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('@temporalio/interceptors-opentelemetry/lib/client') as typeof ClientInterceptor;
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer })] };
}
