// The data converter for clients and workers when `encryption` is configured: the AES-GCM payload codec plus the
// failure converter that moves messages and stack traces into encrypted payloads. Undefined when encryption is off.
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { AesGcmCodec } from './aes-gcm-codec';
import type { EncryptionConfig } from './config';
import { resolveKeys } from './keys';

/** Loaded by the worker (via tsx or vitest) and bundled into the workflow sandbox (bundleWorkflowCode). */
export const FAILURE_CONVERTER_PATH = path.resolve(__dirname, `failure-converter${path.extname(__filename)}`);

export function createCodec(
  encryption: EncryptionConfig,
  opts: { env?: NodeJS.ProcessEnv; acceptPlaintext?: boolean } = {},
): AesGcmCodec {
  return new AesGcmCodec({
    ...resolveKeys(encryption, opts.env),
    acceptPlaintext: opts.acceptPlaintext ?? encryption.acceptPlaintext,
  });
}

/**
 * Pass to `Worker.create({ dataConverter })` and `new Client({ dataConverter })`; undefined without encryption.
 * `acceptPlaintext` overrides the configuration: clients pass true (refusing plaintext guards what a worker runs;
 * a client reading a task's status gains nothing from refusing it).
 */
export function dataConverterFor(
  config: { encryption?: EncryptionConfig | undefined },
  opts: { env?: NodeJS.ProcessEnv; acceptPlaintext?: boolean } = {},
): DataConverter | undefined {
  if (!config.encryption) return undefined;
  return { payloadCodecs: [createCodec(config.encryption, opts)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** Options for `bundleWorkflowCode` so failures raised inside workflows are encoded too. */
export function workflowBundleConverterOptions(config: { encryption?: EncryptionConfig | undefined }): {
  failureConverterPath?: string;
} {
  return config.encryption ? { failureConverterPath: FAILURE_CONVERTER_PATH } : {};
}

/** One line for a starting worker or codec server: which key encrypts, which decrypt, whether plaintext is read. */
export function encryptionSummary(encryption: EncryptionConfig, acceptPlaintext = encryption.acceptPlaintext): string {
  const ids = encryption.keys.map((k) => k.id);
  const active = encryption.activeKeyId ?? ids[0];
  return (
    `payload encryption on: new payloads use key '${active}'; keys ${ids.join(', ')} decrypt; ` +
    `plaintext payloads are ${acceptPlaintext ? 'accepted' : 'refused'}`
  );
}
