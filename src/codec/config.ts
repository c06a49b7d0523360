// The `encryption` section of the configuration (zod schema) and its environment overrides. Pure: no files are read
// here; keys named by `keyEnv`/`keyFile` are resolved when a codec is built (src/codec/keys.ts).
import { z } from 'zod';

/** AES-256 wants exactly 32 bytes of key. */
export const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const KEY_HINT = 'make one with `openssl rand -base64 32`';

/** The key bytes of a base64 (or base64url) text, or a one-line reason it is not a 32-byte key. */
export function decodeKey(text: string): { key: Buffer } | { error: string } {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return { error: `is not base64; ${KEY_HINT}` };
  const key = Buffer.from(trimmed, 'base64'); // Node reads both alphabets
  if (key.length !== KEY_BYTES) {
    return { error: `must be the base64 of ${KEY_BYTES} bytes, got ${key.length} bytes; ${KEY_HINT}` };
  }
  return { key };
}

const EncryptionKeySchema = z
  .strictObject({
    id: z.string().regex(KEY_ID, 'must be 1-64 letters, digits, dots, dashes or underscores'),
    /** The key itself, base64 of 32 bytes. */
    key: z.string().optional(),
    /** The name of an environment variable holding the base64 key. */
    keyEnv: z.string().min(1).optional(),
    /** A file holding the base64 key (relative paths are relative to the working directory). */
    keyFile: z.string().min(1).optional(),
  })
  .superRefine((k, ctx) => {
    const given = [k.key, k.keyEnv, k.keyFile].filter((v) => v !== undefined).length;
    if (given !== 1)
      ctx.addIssue({ code: 'custom', message: `key '${k.id}' needs exactly one of key, keyEnv, keyFile` });
    if (k.key === undefined) return;
    const decoded = decodeKey(k.key);
    if ('error' in decoded) ctx.addIssue({ code: 'custom', path: ['key'], message: decoded.error });
  });

export const EncryptionSchema = z
  .strictObject({
    /** Every key that may decrypt; the active one encrypts. Keep retired keys here so old histories stay readable. */
    keys: z.array(EncryptionKeySchema).min(1),
    /** The key new payloads are encrypted with; default: the first. */
    activeKeyId: z.string().optional(),
    /** Decode plaintext payloads (tasks started by a client without the codec, histories from before). */
    acceptPlaintext: z.boolean().default(true),
  })
  .superRefine((e, ctx) => {
    const ids = e.keys.map((k) => k.id);
    const twice = ids.find((id, i) => ids.indexOf(id) !== i);
    if (twice) ctx.addIssue({ code: 'custom', path: ['keys'], message: `key id '${twice}' appears twice` });
    if (e.activeKeyId !== undefined && !ids.includes(e.activeKeyId)) {
      ctx.addIssue({
        code: 'custom',
        path: ['activeKeyId'],
        message: `'${e.activeKeyId}' is not one of the key ids (${ids.join(', ')})`,
      });
    }
  });
export type EncryptionConfig = z.infer<typeof EncryptionSchema>;

/**
 * Environment overrides of the section, or undefined when none is set:
 * - `CUA_ENCRYPTION_KEYS="k2:BASE64,k1:BASE64"` replaces the keys (the first encrypts, all decrypt);
 * - `CUA_ENCRYPTION_KEY=BASE64` is one key with id `env` (for a single key; rotate with CUA_ENCRYPTION_KEYS);
 * - `CUA_ENCRYPTION_ACCEPT_PLAINTEXT=false|true`.
 */
export function encryptionEnvOverride(
  section: unknown,
  env: NodeJS.ProcessEnv,
  fail: (message: string) => Error,
): Record<string, unknown> | undefined {
  const { CUA_ENCRYPTION_KEYS: list, CUA_ENCRYPTION_KEY: single, CUA_ENCRYPTION_ACCEPT_PLAINTEXT: plain } = env;
  if (!list && !single && plain === undefined) return undefined;
  const out: Record<string, unknown> =
    typeof section === 'object' && section !== null ? { ...(section as Record<string, unknown>) } : {};
  if (list && single) throw fail('set CUA_ENCRYPTION_KEYS or CUA_ENCRYPTION_KEY, not both');
  if (list || single) {
    out.keys = list ? parseKeyList(list, fail) : [{ id: 'env', key: single }];
    delete out.activeKeyId;
  }
  if (plain !== undefined) {
    if (plain !== 'true' && plain !== 'false') {
      throw fail(`CUA_ENCRYPTION_ACCEPT_PLAINTEXT must be true or false, got '${plain}'`);
    }
    out.acceptPlaintext = plain === 'true';
  }
  if (out.keys === undefined) {
    throw fail('CUA_ENCRYPTION_ACCEPT_PLAINTEXT is set but no keys are (encryption.keys or CUA_ENCRYPTION_KEYS)');
  }
  return out;
}

function parseKeyList(list: string, fail: (message: string) => Error): { id: string; key: string }[] {
  return list.split(',').map((entry, i) => {
    const at = entry.indexOf(':');
    if (at <= 0) throw fail(`CUA_ENCRYPTION_KEYS entry ${i + 1} must be id:base64key (entries separated by commas)`);
    return { id: entry.slice(0, at).trim(), key: entry.slice(at + 1).trim() };
  });
}
