// How the console reads Temporal payloads: through the configured codec (the same keys as the workers and `cua`),
// except that a payload it cannot decrypt — no key configured, or not the key it was encrypted with — passes through
// still encrypted and is read as a placeholder (sealed-payloads.ts) rather than failing the whole page.
import { defaultFailureConverter } from '@temporalio/common';
import type { LoadedDataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { AgentClient } from '../client/client';
import { PayloadDecryptionError, UnknownEncryptionKeyError } from '../src/codec/aes-gcm-codec';
import type { AesGcmCodec } from '../src/codec/aes-gcm-codec';
import { createCodec } from '../src/codec/data-converter';
import { failureConverter } from '../src/codec/failure-converter';
import type { Config } from '../src/runtime/config';
import { connectClient } from '../src/runtime/connect';
import { openRunStore } from '../src/trajectory/open-store';
import { payloadConverter } from './sealed-payloads';

/** Decrypts what it has the key for; leaves the rest as it is. */
class KeyOrPlaceholderCodec implements PayloadCodec {
  constructor(private readonly codec: AesGcmCodec) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return this.codec.encode(payloads);
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      try {
        return this.codec.decrypt(p);
      } catch (err) {
        if (err instanceof UnknownEncryptionKeyError || err instanceof PayloadDecryptionError) return p;
        throw err;
      }
    });
  }
}

/**
 * The console's data converter, loaded (the SDK takes one as it is, no module path to load): the configured codec
 * and failure converter (if any), and placeholders for what it cannot decrypt.
 */
export function consoleDataConverter(config: Pick<Config, 'encryption'>): LoadedDataConverter {
  const codec = config.encryption && createCodec(config.encryption, { acceptPlaintext: true });
  return {
    payloadConverter,
    failureConverter: codec ? failureConverter : defaultFailureConverter,
    payloadCodecs: codec ? [new KeyOrPlaceholderCodec(codec)] : [],
  };
}

/** The agent client the console runs on (`cua console`): agentClientFor's, with the console's data converter. */
export async function consoleAgentClient(config: Config): Promise<AgentClient> {
  const client = await connectClient(config, consoleDataConverter(config));
  return new AgentClient(client, config.taskQueue, () => openRunStore(config));
}
