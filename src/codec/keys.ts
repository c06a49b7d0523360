// Resolves the configured encryption keys (inline, from an environment variable, or from a file) into key bytes,
// with one-line ConfigErrors naming the key that is wrong.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../common/config-error';
import { decodeKey } from './config';
import type { EncryptionConfig } from './config';

export interface CodecKey {
  id: string;
  key: Buffer;
}

export interface KeyRing {
  /** The key new payloads are encrypted with. */
  active: CodecKey;
  /** Every key that decrypts, the active one included. */
  keys: readonly CodecKey[];
}

type KeyEntry = EncryptionConfig['keys'][number];

function keyText(entry: KeyEntry, env: NodeJS.ProcessEnv): { text: string; from: string } {
  if (entry.keyEnv !== undefined) {
    const text = env[entry.keyEnv];
    if (!text) throw new ConfigError(`encryption key '${entry.id}': environment variable ${entry.keyEnv} is not set`);
    return { text, from: `environment variable ${entry.keyEnv}` };
  }
  if (entry.keyFile !== undefined) {
    const file = path.resolve(entry.keyFile);
    try {
      return { text: fs.readFileSync(file, 'utf8'), from: `file ${file}` };
    } catch (err) {
      throw new ConfigError(
        `encryption key '${entry.id}': cannot read ${file} (${(err as NodeJS.ErrnoException).code})`,
      );
    }
  }
  return { text: entry.key ?? '', from: 'encryption.keys' };
}

export function resolveKeys(encryption: EncryptionConfig, env: NodeJS.ProcessEnv = process.env): KeyRing {
  const keys = encryption.keys.map((entry): CodecKey => {
    const { text, from } = keyText(entry, env);
    const decoded = decodeKey(text);
    if ('error' in decoded) throw new ConfigError(`encryption key '${entry.id}' (${from}) ${decoded.error}`);
    return { id: entry.id, key: decoded.key };
  });
  const activeId = encryption.activeKeyId ?? keys[0]?.id;
  const active = keys.find((k) => k.id === activeId);
  if (!active) throw new ConfigError(`encryption.activeKeyId '${activeId}' is not one of the configured keys`);
  return { active, keys };
}
