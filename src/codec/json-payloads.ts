// Payloads in the codec-server JSON protocol (proto3 JSON): `{ payloads: [{ metadata: { k: base64 }, data: base64 }] }`.
import type { Payload } from '@temporalio/common';

export interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

export class PayloadJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function bytes(value: unknown, where: string): Buffer {
  if (typeof value !== 'string' || !BASE64.test(value)) throw new PayloadJsonError(`${where} must be a base64 string`);
  return Buffer.from(value, 'base64');
}

/** The payloads of a request body, or a PayloadJsonError saying what is wrong with it. */
export function payloadsFromJson(body: unknown): Payload[] {
  const list = (body as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(list)) throw new PayloadJsonError('the body must be {"payloads": [...]}');
  return list.map((raw: unknown, i): Payload => {
    if (typeof raw !== 'object' || raw === null) throw new PayloadJsonError(`payloads[${i}] must be an object`);
    const { metadata, data } = raw as { metadata?: unknown; data?: unknown };
    if (metadata != null && (typeof metadata !== 'object' || Array.isArray(metadata))) {
      throw new PayloadJsonError(`payloads[${i}].metadata must be an object`);
    }
    return {
      metadata: Object.fromEntries(
        Object.entries((metadata ?? {}) as Record<string, unknown>).map(([k, v]) => [
          k,
          bytes(v, `payloads[${i}].metadata.${k}`),
        ]),
      ),
      data: data == null ? new Uint8Array() : bytes(data, `payloads[${i}].data`),
    };
  });
}

export function payloadsToJson(payloads: readonly Payload[]): { payloads: JsonPayload[] } {
  const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
  return {
    payloads: payloads.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
      data: b64(p.data ?? new Uint8Array()),
    })),
  };
}
