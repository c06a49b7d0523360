// Encryption at rest for files the runtime keeps outside workflow history (saved sign-ins): AES-256-GCM with the
// payload codec's keys, a fresh 12-byte IV per file, and the key id beside the ciphertext so rotated keys still open
// old files. Runs outside the workflow sandbox only.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { EncryptionConfig } from './config';
import { resolveKeys } from './keys';
import type { KeyRing } from './keys';

const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** An encrypted text: the key id and base64 of IV, ciphertext and tag. */
export type SealedText = { keyId: string; data: string };

/** A sealed file that cannot be opened: no such key here, or it does not authenticate. */
export class SealedFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Seals and opens texts with a key ring (the active key seals; any key of the ring opens). */
export class Sealer {
  readonly acceptPlaintext: boolean;
  private readonly ring: KeyRing;

  constructor(ring: KeyRing, acceptPlaintext = true) {
    this.ring = ring;
    this.acceptPlaintext = acceptPlaintext;
  }

  seal(text: string): SealedText {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, this.ring.active.key, iv);
    const data = Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { keyId: this.ring.active.id, data: data.toString('base64') };
  }

  open(sealed: SealedText): string {
    const entry = this.ring.keys.find((k) => k.id === sealed.keyId);
    if (!entry) {
      throw new SealedFileError(`it was encrypted with key id '${sealed.keyId}', which is not configured here`);
    }
    const data = Buffer.from(sealed.data, 'base64');
    if (data.length < IV_BYTES + TAG_BYTES) throw new SealedFileError('its ciphertext is truncated');
    const decipher = createDecipheriv(CIPHER, entry.key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SealedFileError(`it does not authenticate with key '${sealed.keyId}': altered, or another key`);
    }
  }
}

/** The sealer of a configuration's `encryption` section; undefined when encryption is off. */
export function sealerFor(
  config: { encryption?: EncryptionConfig | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Sealer | undefined {
  if (!config.encryption) return undefined;
  return new Sealer(resolveKeys(config.encryption, env), config.encryption.acceptPlaintext);
}
