// The payload codec: AES-256-GCM over the whole serialized Payload (its metadata included), a fresh 12-byte IV per
// payload, the key id in the outer metadata so rotated keys keep decrypting old histories. Runs outside the workflow
// sandbox (client, worker, codec server), so node:crypto is fine here.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { CodecKey, KeyRing } from './keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
export const CIPHER_METADATA = 'encryption-cipher';
const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

class CodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
/** An encrypted payload names a key id this process does not have. */
export class UnknownEncryptionKeyError extends CodecError {}
/** The ciphertext does not authenticate: tampered with, truncated, or another key filed under the same id. */
export class PayloadDecryptionError extends CodecError {}
/** A plaintext payload reached a codec configured with `acceptPlaintext: false`. */
export class PlaintextPayloadRefusedError extends CodecError {}

const utf8 = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);

export interface AesGcmCodecOptions extends KeyRing {
  /** Pass plaintext payloads through on decode (default true); false refuses them with a clear error. */
  acceptPlaintext?: boolean;
}

export class AesGcmCodec implements PayloadCodec {
  private readonly byId: ReadonlyMap<string, CodecKey>;
  private readonly active: CodecKey;
  readonly acceptPlaintext: boolean;

  constructor(opts: AesGcmCodecOptions) {
    this.byId = new Map(opts.keys.map((k) => [k.id, k]));
    this.active = opts.active;
    this.acceptPlaintext = opts.acceptPlaintext ?? true;
  }

  get activeKeyId(): string {
    return this.active.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.encrypt(p));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.decrypt(p));
  }

  encrypt(payload: Payload): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, this.active.key, iv);
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        encoding: Buffer.from(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: Buffer.from(this.active.id),
        [CIPHER_METADATA]: Buffer.from(CIPHER),
      },
      data,
    };
  }

  decrypt(payload: Payload): Payload {
    const encoding = utf8(payload.metadata?.encoding);
    if (encoding !== ENCRYPTED_ENCODING) {
      if (this.acceptPlaintext) return payload;
      throw new PlaintextPayloadRefusedError(
        `refused a plaintext payload (encoding ${encoding ?? 'none'}): encryption.acceptPlaintext is false, ` +
          'so only payloads encrypted by a cua client or worker (or a client using the codec server) are read',
      );
    }
    const keyId = utf8(payload.metadata?.[KEY_ID_METADATA]) ?? '(none)';
    const entry = this.byId.get(keyId);
    if (!entry) {
      throw new UnknownEncryptionKeyError(
        `payload encrypted with key id '${keyId}', which is not configured (have: ${[...this.byId.keys()].join(', ')}); ` +
          'add that key to encryption.keys to read it',
      );
    }
    const data = Buffer.from(payload.data ?? []);
    if (data.length < IV_BYTES + TAG_BYTES) {
      throw new PayloadDecryptionError(`payload encrypted with key id '${keyId}' is truncated (${data.length} bytes)`);
    }
    const decipher = createDecipheriv(CIPHER, entry.key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        `payload encrypted with key id '${keyId}' does not authenticate: it was altered, or that id names another key`,
      );
    }
    return temporal.api.common.v1.Payload.decode(plain);
  }
}
