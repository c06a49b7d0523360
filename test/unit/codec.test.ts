// Specification of payload encryption: the AES-256-GCM codec (round trip, key rotation, errors, plaintext policy),
// the `encryption` configuration and its environment overrides, the failure converter, and the codec server.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import {
  AesGcmCodec,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadDecryptionError,
  PlaintextPayloadRefusedError,
  UnknownEncryptionKeyError,
} from '../../src/codec/aes-gcm-codec';
import { dataConverterFor, workflowBundleConverterOptions } from '../../src/codec/data-converter';
import { failureConverter } from '../../src/codec/failure-converter';
import { payloadsFromJson, payloadsToJson } from '../../src/codec/json-payloads';
import { resolveKeys } from '../../src/codec/keys';
import { isLoopbackHost, startCodecServer } from '../../src/codec/server';
import type { CodecServer } from '../../src/codec/server';
import { ConfigError } from '../../src/common/config-error';
import { loadConfig } from '../../src/runtime/config';

const KEY_A = randomBytes(32);
const KEY_B = randomBytes(32);
const b64 = (b: Buffer) => b.toString('base64');
const text = (b: Uint8Array | null | undefined) => Buffer.from(b ?? []).toString('utf8');
const json = (value: unknown): Payload => defaultPayloadConverter.toPayload(value) as Payload;

function codec(keys: Record<string, Buffer>, opts: { active?: string; acceptPlaintext?: boolean } = {}): AesGcmCodec {
  const list = Object.entries(keys).map(([id, key]) => ({ id, key }));
  const active = list.find((k) => k.id === (opts.active ?? list[0]?.id));
  if (!active) throw new Error('no active key');
  return new AesGcmCodec({ keys: list, active, acceptPlaintext: opts.acceptPlaintext });
}

describe('AesGcmCodec', () => {
  const a = codec({ A: KEY_A });

  it('round-trips payloads, their metadata included', async () => {
    const originals = [json({ instruction: 'Book for Ada Lovelace' }), json('Lisbon'), json(null), json(42)];
    const decoded = await a.decode(await a.encode(originals));
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
      { instruction: 'Book for Ada Lovelace' },
      'Lisbon',
      null,
      42,
    ]);
    expect(text(decoded[0]?.metadata?.encoding)).toBe('json/plain');
  });

  it('marks encrypted payloads with the encoding and the key id, and hides the content', async () => {
    const [encrypted] = await a.encode([json('card 4111 1111 1111 1111')]);
    expect(text(encrypted?.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(encrypted?.metadata?.[KEY_ID_METADATA])).toBe('A');
    expect(text(encrypted?.data)).not.toContain('4111');
    expect(Object.values(encrypted?.metadata ?? {}).map(text)).not.toContain('json/plain');
  });

  it('uses a fresh IV per payload: the same value encrypts differently', async () => {
    const [x, y] = await a.encode([json('same'), json('same')]);
    expect(Buffer.from(x?.data ?? []).equals(Buffer.from(y?.data ?? []))).toBe(false);
  });

  it('rotates: key B encrypts new payloads while A still decrypts old ones', async () => {
    const [old] = await a.encode([json('before rotation')]);
    const rotated = codec({ B: KEY_B, A: KEY_A });
    expect(rotated.activeKeyId).toBe('B');
    const [fresh] = await rotated.encode([json('after rotation')]);
    expect(text(fresh?.metadata?.[KEY_ID_METADATA])).toBe('B');
    const decoded = await rotated.decode([old as Payload, fresh as Payload]);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual(['before rotation', 'after rotation']);
    // activeKeyId picks another than the first
    expect(codec({ B: KEY_B, A: KEY_A }, { active: 'A' }).activeKeyId).toBe('A');
  });

  it('names the unknown key id when a payload needs a key it lacks', async () => {
    const [fromB] = await codec({ B: KEY_B }).encode([json('x')]);
    await expect(a.decode([fromB as Payload])).rejects.toThrow(UnknownEncryptionKeyError);
    await expect(a.decode([fromB as Payload])).rejects.toThrow(/key id 'B', which is not configured \(have: A\)/);
  });

  it.each([
    ['a flipped ciphertext byte', (d: Buffer) => (d[14] = (d[14] ?? 0) ^ 1)],
    ['a flipped tag byte', (d: Buffer) => (d[d.length - 1] = (d[d.length - 1] ?? 0) ^ 1)],
    ['a flipped IV byte', (d: Buffer) => (d[0] = (d[0] ?? 0) ^ 1)],
  ])('refuses a payload with %s', async (_what, tamper) => {
    const [encrypted] = await a.encode([json('pay 100 EUR')]);
    const data = Buffer.from(encrypted?.data ?? []);
    tamper(data);
    await expect(a.decode([{ ...encrypted, data }])).rejects.toThrow(PayloadDecryptionError);
    await expect(a.decode([{ ...encrypted, data }])).rejects.toThrow(/key id 'A' does not authenticate/);
  });

  it('refuses a truncated payload and another key filed under the same id', async () => {
    const [encrypted] = await a.encode([json('x')]);
    await expect(a.decode([{ ...encrypted, data: new Uint8Array(10) }])).rejects.toThrow(/truncated/);
    await expect(codec({ A: KEY_B }).decode([encrypted as Payload])).rejects.toThrow(PayloadDecryptionError);
  });

  it('passes plaintext payloads through by default and refuses them when told to', async () => {
    const plain = json({ instruction: 'from the temporal CLI' });
    expect(await a.decode([plain])).toEqual([plain]);
    const strict = codec({ A: KEY_A }, { acceptPlaintext: false });
    await expect(strict.decode([plain])).rejects.toThrow(PlaintextPayloadRefusedError);
    await expect(strict.decode([plain])).rejects.toThrow(/plaintext payload \(encoding json\/plain\).*acceptPlaintext/);
    // encrypted payloads still decode
    const decoded = await strict.decode(await strict.encode([plain]));
    expect(defaultPayloadConverter.fromPayload(decoded[0] as Payload)).toEqual({
      instruction: 'from the temporal CLI',
    });
  });
});

describe('encryption configuration', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cua-codec-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const load = (encryption: unknown, env: NodeJS.ProcessEnv = {}) => {
    const file = path.join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    fs.writeFileSync(file, JSON.stringify(encryption === undefined ? {} : { encryption }));
    return loadConfig({ file, env });
  };

  it('is off unless configured', () => {
    expect(load(undefined).encryption).toBeUndefined();
    expect(dataConverterFor(load(undefined))).toBeUndefined();
    expect(workflowBundleConverterOptions(load(undefined))).toEqual({});
  });

  it('defaults: the first key encrypts, plaintext is accepted', () => {
    const config = load({
      keys: [
        { id: 'k2', key: b64(KEY_B) },
        { id: 'k1', key: b64(KEY_A) },
      ],
    });
    expect(config.encryption?.acceptPlaintext).toBe(true);
    const ring = resolveKeys(config.encryption!, {});
    expect(ring.active.id).toBe('k2');
    expect(ring.keys.map((k) => k.id)).toEqual(['k2', 'k1']);
    expect(ring.active.key.equals(KEY_B)).toBe(true);
  });

  it.each([
    [
      { keys: [{ id: 'k', key: b64(randomBytes(16)) }] },
      /encryption\.keys\.0\.key: must be the base64 of 32 bytes, got 16/,
    ],
    [{ keys: [{ id: 'k', key: 'not base64!' }] }, /encryption\.keys\.0\.key: is not base64/],
    [{ keys: [{ id: 'k' }] }, /key 'k' needs exactly one of key, keyEnv, keyFile/],
    [{ keys: [{ id: 'k', key: b64(KEY_A), keyEnv: 'X' }] }, /exactly one of key, keyEnv, keyFile/],
    [{ keys: [] }, /encryption\.keys/],
    [{ keys: [{ id: 'has space', key: b64(KEY_A) }] }, /encryption\.keys\.0\.id/],
    [
      {
        keys: [
          { id: 'k', key: b64(KEY_A) },
          { id: 'k', key: b64(KEY_B) },
        ],
      },
      /key id 'k' appears twice/,
    ],
    [{ keys: [{ id: 'k', key: b64(KEY_A) }], activeKeyId: 'x' }, /activeKeyId: 'x' is not one of the key ids \(k\)/],
  ])('refuses %j with one clear line', (encryption, message) => {
    expect(() => load(encryption)).toThrow(ConfigError);
    expect(() => load(encryption)).toThrow(message);
    try {
      load(encryption);
    } catch (err) {
      expect((err as Error).message).not.toContain('\n');
    }
  });

  it('reads keys from an environment variable and from a file', () => {
    const file = path.join(dir, 'key.b64');
    fs.writeFileSync(file, `${b64(KEY_B)}\n`);
    const config = load({
      keys: [
        { id: 'e', keyEnv: 'MY_KEY' },
        { id: 'f', keyFile: file },
      ],
    });
    const ring = resolveKeys(config.encryption!, { MY_KEY: b64(KEY_A) });
    expect(ring.keys.map((k) => [k.id, k.key.equals(k.id === 'e' ? KEY_A : KEY_B)])).toEqual([
      ['e', true],
      ['f', true],
    ]);
  });

  it('names the key whose variable or file is missing or holds a short key', () => {
    const missing = load({ keys: [{ id: 'e', keyEnv: 'MY_KEY' }] }).encryption!;
    expect(() => resolveKeys(missing, {})).toThrow(/encryption key 'e': environment variable MY_KEY is not set/);
    expect(() => resolveKeys(missing, { MY_KEY: b64(randomBytes(31)) })).toThrow(
      /encryption key 'e' \(environment variable MY_KEY\) must be the base64 of 32 bytes, got 31 bytes/,
    );
    const noFile = load({ keys: [{ id: 'f', keyFile: path.join(dir, 'nope') }] }).encryption!;
    expect(() => resolveKeys(noFile, {})).toThrow(/encryption key 'f': cannot read .*nope \(ENOENT\)/);
    expect(() => dataConverterFor({ encryption: missing }, { env: {} })).toThrow(ConfigError);
  });

  it('takes keys from CUA_ENCRYPTION_KEYS (first encrypts) or CUA_ENCRYPTION_KEY (id env)', () => {
    const fromFile = { keys: [{ id: 'file', key: b64(KEY_A) }], activeKeyId: 'file', acceptPlaintext: false };
    const listed = load(fromFile, { CUA_ENCRYPTION_KEYS: `new:${b64(KEY_B)}, old:${b64(KEY_A)}` }).encryption!;
    expect(listed).toEqual({
      keys: [
        { id: 'new', key: b64(KEY_B) },
        { id: 'old', key: b64(KEY_A) },
      ],
      acceptPlaintext: false,
    });
    expect(resolveKeys(listed).active.id).toBe('new');
    const single = load(undefined, { CUA_ENCRYPTION_KEY: b64(KEY_A), CUA_ENCRYPTION_ACCEPT_PLAINTEXT: 'false' });
    expect(single.encryption).toEqual({ keys: [{ id: 'env', key: b64(KEY_A) }], acceptPlaintext: false });
  });

  it.each([
    [{ CUA_ENCRYPTION_KEYS: b64(KEY_A) }, /CUA_ENCRYPTION_KEYS entry 1 must be id:base64key/],
    [{ CUA_ENCRYPTION_KEYS: `a:${b64(KEY_A)}`, CUA_ENCRYPTION_KEY: b64(KEY_A) }, /not both/],
    [{ CUA_ENCRYPTION_ACCEPT_PLAINTEXT: 'no' }, /CUA_ENCRYPTION_ACCEPT_PLAINTEXT must be true or false/],
    [{ CUA_ENCRYPTION_ACCEPT_PLAINTEXT: 'false' }, /CUA_ENCRYPTION_ACCEPT_PLAINTEXT is set but no keys are/],
    [{ CUA_ENCRYPTION_KEY: 'c2hvcnQ=' }, /encryption\.keys\.0\.key: must be the base64 of 32 bytes, got 5 bytes/],
  ])('refuses the environment %j', (env, message) => {
    expect(() => load(undefined, env)).toThrow(ConfigError);
    expect(() => load(undefined, env)).toThrow(message);
  });
});

describe('the data converter with encryption', () => {
  const config = { encryption: { keys: [{ id: 'A', key: b64(KEY_A) }], acceptPlaintext: true } };

  it('loads the failure converter that encodes messages and stack traces (also for the workflow bundle)', () => {
    const converter = dataConverterFor(config);
    expect(converter?.payloadCodecs).toHaveLength(1);
    const loaded = loadDataConverter(converter);
    expect(loaded.failureConverter).toMatchObject({ options: { encodeCommonAttributes: true } });
    expect(workflowBundleConverterOptions(config).failureConverterPath).toBe(converter?.failureConverterPath);
  });

  it('lets clients read plaintext whatever the setting (refusing it guards what workers run)', () => {
    const strict = { encryption: { ...config.encryption, acceptPlaintext: false } };
    const codecOf = (c: ReturnType<typeof dataConverterFor>) => c?.payloadCodecs?.[0] as AesGcmCodec;
    expect(codecOf(dataConverterFor(strict)).acceptPlaintext).toBe(false);
    expect(codecOf(dataConverterFor(strict, { acceptPlaintext: true })).acceptPlaintext).toBe(true);
  });

  it('moves the message and stack into a payload the codec encrypts', async () => {
    const failure = failureConverter.errorToFailure(
      ApplicationFailure.create({ message: 'card 4111 declined for Ada Lovelace', nonRetryable: true }),
      defaultPayloadConverter,
    );
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    const c = codec({ A: KEY_A });
    const [encrypted] = await c.encode([failure.encodedAttributes as Payload]);
    expect(text(encrypted?.data)).not.toContain('Lovelace');
    const back = failureConverter.failureToError(
      { ...failure, encodedAttributes: (await c.decode([encrypted as Payload]))[0] },
      defaultPayloadConverter,
    );
    expect(back.message).toBe('card 4111 declined for Ada Lovelace');
  });
});

describe('codec server', () => {
  let server: CodecServer;
  let secured: CodecServer;
  const UI = 'http://127.0.0.1:8233';
  const c = codec({ A: KEY_A });
  beforeAll(async () => {
    server = await startCodecServer({ codec: c, port: 0 });
    secured = await startCodecServer({ codec: c, port: 0, token: 's3cret' });
  });
  afterAll(async () => {
    await server?.close();
    await secured?.close();
  });
  const post = (base: string, route: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/${route}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('converts payloads to and from the JSON protocol', () => {
    const p = json('Lisbon');
    expect(payloadsFromJson(payloadsToJson([p]))).toEqual([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"Lisbon"') },
    ]);
    expect(() => payloadsFromJson({})).toThrow(/\{"payloads": \[\.\.\.\]\}/);
    expect(() => payloadsFromJson({ payloads: [{ data: 42 }] })).toThrow(/payloads\[0\]\.data must be a base64/);
  });

  it('decodes what the codec encoded and encodes for the UI and CLI, under any namespace prefix', async () => {
    const encrypted = await c.encode([json({ instruction: 'Book for Ada Lovelace' })]);
    const res = await post(server.url, 'decode', payloadsToJson(encrypted), { Origin: UI });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI);
    const decoded = payloadsFromJson(await res.json());
    expect(defaultPayloadConverter.fromPayload(decoded[0] as Payload)).toEqual({
      instruction: 'Book for Ada Lovelace',
    });

    const enc = await post(server.url, 'default/encode', payloadsToJson([json('Lisbon')]));
    const [back] = await c.decode(payloadsFromJson(await enc.json()));
    expect(defaultPayloadConverter.fromPayload(back as Payload)).toBe('Lisbon');
  });

  it('answers the CORS preflight for the UI origin only, and refuses other origins', async () => {
    const ok = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: UI, 'Access-Control-Request-Method': 'POST' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(UI);
    expect(ok.headers.get('access-control-allow-headers')).toBe('Content-Type, X-Namespace, Authorization');
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
    const evil = await post(server.url, 'decode', { payloads: [] }, { Origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('explains bad requests: unknown key id, malformed body, wrong route or method', async () => {
    const fromB = await codec({ B: KEY_B }).encode([json('x')]);
    const unknown = await post(server.url, 'decode', payloadsToJson(fromB));
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/key id 'B', which is not configured/);
    expect((await post(server.url, 'decode', 'not json')).status).toBe(400);
    expect((await post(server.url, 'nope', { payloads: [] })).status).toBe(404);
    expect((await fetch(`${server.url}/decode`)).status).toBe(405);
  });

  it('requires the bearer token when one is set; the preflight does not need it', async () => {
    const body = payloadsToJson([json('x')]);
    expect((await post(secured.url, 'encode', body)).status).toBe(401);
    expect((await post(secured.url, 'encode', body, { Authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(secured.url, 'encode', body, { Authorization: 'Bearer s3cret' })).status).toBe(200);
    const preflight = await fetch(`${secured.url}/decode`, { method: 'OPTIONS', headers: { Origin: UI } });
    expect(preflight.status).toBe(204);
  });

  it('will not bind beyond loopback without a token, nor allow every origin without one', async () => {
    expect(() => startCodecServer({ codec: c, host: '0.0.0.0', port: 0 })).toThrow(/needs --token/);
    expect(() => startCodecServer({ codec: c, port: 0, uiOrigins: ['*'] })).toThrow(/needs a token/);
    expect([isLoopbackHost('127.0.0.1'), isLoopbackHost('::1'), isLoopbackHost('localhost')]).toEqual([
      true,
      true,
      true,
    ]);
    expect([isLoopbackHost('0.0.0.0'), isLoopbackHost('10.0.0.5'), isLoopbackHost('::')]).toEqual([
      false,
      false,
      false,
    ]);
  });
});
