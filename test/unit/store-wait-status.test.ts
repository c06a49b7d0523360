// The client's view of a task waiting for its run store: the waiting activity's heartbeat details decoded (also when
// payloads are encrypted), the wait found among the pending activities, the line `cua status` and `cua run` print,
// and the session queue told apart from an open that merely heartbeats. Pure: a described workflow is an object here.
import { randomBytes } from 'node:crypto';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { defaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { pendingDetails, storeWaitLine, waitingForSession, waitingForStore } from '../../client/tasks';
import { AesGcmCodec } from '../../src/codec/aes-gcm-codec';
import { IN_LINE_DETAIL } from '../../src/agent/failure-types';
import { STORE_WAIT_DETAIL } from '../../src/trajectory/store-wait';
import type { StoreWait } from '../../src/trajectory/store-wait';

const WAIT: StoreWait = {
  kind: 'full',
  since: '2026-01-01T01:10:14.000Z',
  until: '2026-01-01T01:40:14.000Z',
  lastError: "ENOSPC: no space left on device, open '/runs/r/screenshot_3_post.png.tmp-1-ab'",
};

const key = { id: 'k1', key: randomBytes(32) };
const plain: LoadedDataConverter = {
  payloadConverter: defaultPayloadConverter,
  failureConverter: defaultFailureConverter,
  payloadCodecs: [],
};
const encrypted: LoadedDataConverter = { ...plain, payloadCodecs: [new AesGcmCodec({ keys: [key], active: key })] };

/** A running workflow's description with these pending activities (name, heartbeat details as they were sent). */
async function described(
  converter: LoadedDataConverter,
  activities: { name: string; details?: unknown; scheduledSecondsAgo?: number }[],
): Promise<WorkflowExecutionDescription> {
  const pendingActivities = await Promise.all(
    activities.map(async (a, i) => {
      let payloads: Payload[] | undefined;
      if ('details' in a) {
        payloads = [defaultPayloadConverter.toPayload(a.details) as Payload];
        for (const codec of converter.payloadCodecs) payloads = await codec.encode(payloads);
      }
      return {
        activityId: String(i + 1),
        activityType: { name: a.name },
        attempt: 1,
        scheduledTime: { seconds: Math.floor(Date.now() / 1000) - (a.scheduledSecondsAgo ?? 0) },
        ...(payloads ? { heartbeatDetails: { payloads } } : {}),
      };
    }),
  );
  return { raw: { pendingActivities } } as unknown as WorkflowExecutionDescription;
}

describe('a task waiting for its run store, as the client sees it', () => {
  it.each([
    ['plain', plain],
    ['encrypted', encrypted],
  ])('finds the wait in the pending act’s heartbeat details (%s payloads)', async (_what, converter) => {
    const desc = await described(converter, [{ name: 'act', details: { [STORE_WAIT_DETAIL]: WAIT } }]);
    const details = await pendingDetails(desc, converter);
    expect(waitingForStore(desc, details)).toEqual(WAIT);
    expect(waitingForSession(desc, details)).toBeNull();
  });

  it('sees no wait once the activity heartbeats without one, or has never heartbeat', async () => {
    const desc = await described(plain, [{ name: 'act', details: undefined }, { name: 'decide' }]);
    expect(waitingForStore(desc, await pendingDetails(desc, plain))).toBeNull();
  });

  it('an encrypted detail the client has no key for is no wait (and no error)', async () => {
    const desc = await described(encrypted, [{ name: 'act', details: { [STORE_WAIT_DETAIL]: WAIT } }]);
    const otherKey = { id: 'k2', key: randomBytes(32) };
    const other = { ...plain, payloadCodecs: [new AesGcmCodec({ keys: [otherKey], active: otherKey })] };
    expect(waitingForStore(desc, await pendingDetails(desc, other))).toBeNull();
  });

  it('prints one line: the fault, since when, and when the task ends if it is not back', () => {
    const line = storeWaitLine(WAIT, Date.parse('2026-01-01T01:13:20Z'));
    expect(line).toBe(
      "waiting for the run store: the run store is full: ENOSPC: no space left on device, open '/runs/r/" +
        "screenshot_3_post.png.tmp-1-ab' — since 01:10:14 UTC (3 min); the task goes on when it is back, or ends " +
        '(run_folder) at 01:40:14 UTC',
    );
    expect(
      storeWaitLine({
        ...WAIT,
        kind: 'unreachable',
        lastError: 'S3 run store http://m:9000: cannot reach it (ECONNREFUSED)',
      }),
    ).toMatch(
      /^waiting for the run store: the run store is unreachable: S3 run store http:\/\/m:9000: cannot reach it/,
    );
  });

  it('an open that heartbeats is in line for a session only when its details say so', async () => {
    const working = await described(plain, [{ name: 'openSession', details: undefined }]);
    expect(waitingForSession(working, await pendingDetails(working, plain))).toBeNull();
    const inLine = await described(plain, [{ name: 'openSession', details: { [IN_LINE_DETAIL]: 2 } }]);
    expect(waitingForSession(inLine, await pendingDetails(inLine, plain))).toMatchObject({ attempts: 1 });
  });
});
