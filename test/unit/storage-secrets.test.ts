// What of a browser's storage is never written to the run store (activities/environments/browser-state.ts): cookies,
// localStorage items and IndexedDB records that hold a configured secret's value.
import { describe, expect, it } from 'vitest';
import { storageWithoutSecrets } from '../../activities/environments/browser-state';
import type { StorageState } from '../../src/browser/environment';

const SECRET = 's3cr3t-value-42';

const storage = {
  cookies: [
    {
      name: 'session',
      value: 'ada',
      domain: 'shop.test',
      path: '/',
      expires: -1,
      httpOnly: false,
      secure: false,
      sameSite: 'Lax',
    },
    {
      name: 'api',
      value: `Bearer ${SECRET}`,
      domain: 'shop.test',
      path: '/',
      expires: -1,
      httpOnly: false,
      secure: false,
      sameSite: 'Lax',
    },
  ],
  origins: [
    {
      origin: 'https://shop.test',
      localStorage: [
        { name: 'cart', value: '2 kettles' },
        { name: 'key', value: SECRET },
      ],
      indexedDB: [
        {
          name: 'shop',
          version: 1,
          stores: [
            {
              name: 'orders',
              keyPath: 'id',
              autoIncrement: false,
              indexes: [],
              records: [
                { value: { id: 1, item: 'kettle' } },
                { value: { id: 2, note: `card ${SECRET}` } },
                { key: SECRET, value: 'keyed by the secret' },
              ],
            },
          ],
        },
      ],
    },
  ],
} as unknown as StorageState;

describe('storage saved for a page', () => {
  it('leaves out every cookie, localStorage item and IndexedDB record holding a secret value', () => {
    const clean = storageWithoutSecrets(storage, [SECRET]);
    expect(JSON.stringify(clean)).not.toContain(SECRET);
    expect(clean.cookies.map((c) => c.name)).toEqual(['session']);
    expect(clean.origins[0]?.localStorage.map((i) => i.name)).toEqual(['cart']);
    const records = (clean.origins[0] as unknown as { indexedDB: Array<{ stores: Array<{ records: unknown[] }> }> })
      .indexedDB[0]?.stores[0]?.records;
    expect(records).toEqual([{ value: { id: 1, item: 'kettle' } }]);
  });

  it('with no secret (or an empty one) keeps everything', () => {
    expect(storageWithoutSecrets(storage, [])).toBe(storage);
    expect(storageWithoutSecrets(storage, [''])).toBe(storage);
  });
});
