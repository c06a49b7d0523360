// `cua console`: the web console — the task list, one task's steps and screenshot, replies and controls — served on
// 127.0.0.1:8300 until Ctrl-C. It prints its link once (the token is in it) and the URL-policy line the workers need.
// Started before the Temporal server (process managers start services in any order), it waits for it as the worker
// does, with the worker's words, and serves its page once the server answers.
import { accessToken } from '../../console/access';
import { consoleDenyHosts } from '../../console/access';
import { consoleAgentClient } from '../../console/codec';
import { knownSecrets } from '../../console/secrets';
import { DEFAULT_CONSOLE_PORT, startConsole } from '../../console/server';
import type { AgentClient } from '../../client/client';
import { loadConfig } from '../../src/runtime/config';
import { endpointFamilies } from '../../src/runtime/config-models';
import { untilReachable } from '../../src/runtime/connect';
import type { Config } from '../../src/runtime/config';
import { openRunStore, storeWhere } from '../../src/trajectory/open-store';
import { intFlag, parse, UsageError } from '../args';

export const CONSOLE_USAGE = `npx cua console [--port ${DEFAULT_CONSOLE_PORT}] [--host 127.0.0.1] [--temporal-ui URL] [--config FILE]`;

/**
 * The Temporal Web UI to link to: the flag, config `console.temporalUiUrl`, or — for a dev server on this machine's
 * default port, as `cua dev`/`cua server` start it — its UI on :8233.
 */
export function temporalUiUrlFor(config: Config, flag?: string): string | null {
  if (flag) return flag;
  if (config.console?.temporalUiUrl) return config.console.temporalUiUrl;
  const address = config.temporal.address;
  return /^(127\.0\.0\.1|localhost):7233$/.test(address) ? 'http://127.0.0.1:8233' : null;
}

export async function consoleCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      'temporal-ui': { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    CONSOLE_USAGE,
  );
  if (values.help) return (console.log(`usage: ${CONSOLE_USAGE}`), 0);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${CONSOLE_USAGE}`);
  const config = loadConfig({ file: values.config });
  const host = values.host ?? '127.0.0.1';
  const port = intFlag(values.port, 'port') ?? DEFAULT_CONSOLE_PORT;
  const { token } = accessToken(host, config.console?.token);
  const stop = new AbortController();
  const stopped = new Promise<void>((resolve) => {
    const onSignal = () => (stop.abort(), resolve());
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  const agent = await connectConsole(config, stop.signal);
  if (!agent) return 0;
  const server = await startConsole({
    agent,
    store: () => openRunStore(config),
    token,
    host,
    port,
    temporalUiUrl: temporalUiUrlFor(config, values['temporal-ui']),
    namespace: config.temporal.namespace,
    endpoints: Object.keys(config.models),
    families: endpointFamilies(config.models),
    secrets: knownSecrets(config),
    ...(config.urlPolicy ? { urlPolicy: config.urlPolicy } : {}),
  });
  const ui = temporalUiUrlFor(config, values['temporal-ui']);
  console.log(`[console] open: ${server.link}`);
  if (ui) console.log(`[console] Temporal UI: ${ui}`);
  console.log(
    `[console] tasks from ${config.temporal.address} (namespace ${config.temporal.namespace}); run folders: ${storeWhere(config)}`,
  );
  console.log(
    `[console] keep the agent's browser away from it: workers' urlPolicy.denyHosts needs ${JSON.stringify(consoleDenyHosts(host, server.port))}`,
  );
  await stopped;
  await server.close();
  await agent.close();
  return 0;
}

/** The console's client, once the Temporal server answers; undefined when a signal ended the wait. */
async function connectConsole(config: Config, signal: AbortSignal): Promise<AgentClient | undefined> {
  const log = (line: string) => console.log(`[console] ${line}`);
  try {
    return await untilReachable(config.temporal.address, () => consoleAgentClient(config), log, signal);
  } catch (err) {
    if (!signal.aborted) throw err;
    log('stopped before the Temporal server was reachable');
    return undefined;
  }
}
