// `cua codec-server`: serve the configured encryption keys over the codec-server protocol so the Temporal Web UI
// and the `temporal` CLI show decrypted payloads. Loopback needs no token; any other bind does.
import { createCodec, encryptionSummary } from '../../src/codec/data-converter';
import { DEFAULT_UI_ORIGINS, isLoopbackHost, startCodecServer } from '../../src/codec/server';
import { ConfigError } from '../../src/common/config-error';
import { loadConfig } from '../../src/runtime/config';
import { intFlag, parse, UsageError } from '../args';

export const CODEC_SERVER_USAGE =
  'npx cua codec-server [--port 8888] [--host 127.0.0.1] [--token T] [--ui-origin URL]... [--config FILE]';

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  token: { type: 'string' },
  'ui-origin': { type: 'string', multiple: true },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

/** How to point the UI and the CLI at a running codec server. */
export function codecServerHints(url: string, token: string | undefined): string[] {
  const auth = token ? ` --codec-auth 'Bearer <token>'` : '';
  return [
    `Web UI: start the dev server with it: npx cua server --ui-codec-endpoint ${url}`,
    `        (or temporal server start-dev --ui-codec-endpoint ${url}), or in an open UI: Codec Server (bottom`,
    `        left) → "Use my browser setting" → endpoint ${url}. A UI with login forwards the user's access token`,
    `        as "Authorization: Bearer" when "Pass the user access token" is on (HTTPS endpoints only).`,
    `temporal CLI: temporal workflow show --workflow-id ID --codec-endpoint ${url}${auth}`,
  ];
}

export async function codecServerCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, CODEC_SERVER_USAGE);
  if (values.help) return (console.log(`usage: ${CODEC_SERVER_USAGE}`), 0);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${CODEC_SERVER_USAGE}`);
  const config = loadConfig({ file: values.config });
  if (!config.encryption) {
    throw new ConfigError(
      'encryption is not configured: add an "encryption" section to cua.config.json or set CUA_ENCRYPTION_KEYS',
    );
  }
  // The UI shows every payload it has, plaintext ones included: the codec server always passes them through.
  const codec = createCodec(config.encryption, { acceptPlaintext: true });
  const host = values.host ?? '127.0.0.1';
  const token = values.token ?? (process.env.CUA_CODEC_SERVER_TOKEN || undefined);
  const uiOrigins = values['ui-origin']?.length ? values['ui-origin'] : DEFAULT_UI_ORIGINS;
  const server = await startCodecServer({
    codec,
    host,
    port: intFlag(values.port, 'port', 0) ?? 8888,
    ...(token ? { token } : {}),
    uiOrigins,
    log: (l) => console.error(`[codec-server] ${l}`),
  });
  console.log(`codec server on ${server.url} (${encryptionSummary(config.encryption, true)})`);
  console.log(
    `browser origins allowed: ${uiOrigins.join(', ')}; ` +
      (token ? 'requests need Authorization: Bearer <token>' : `no token needed (bound to loopback ${host})`),
  );
  if (!isLoopbackHost(host)) console.log('it speaks plain HTTP: put it behind TLS (a reverse proxy) beyond this host');
  for (const line of codecServerHints(server.url, token)) console.log(line);
  await waitForSignal();
  await server.close();
  return 0;
}
