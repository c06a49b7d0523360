// Specification of the init scripts that put saved sessionStorage back at a restore (src/browser/page-state.ts):
// one script per origin, each carrying that origin's items only, behind a check of the frame's origin, so a frame of
// another origin never holds them as a value. Run here in a bare VM context standing in for a frame.
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { seedSessionStorageOnLoad } from '../../src/browser/page-state';
import { sessionStorageSeedScript } from '../../src/browser/page-state-scripts';

const A = 'http://127.0.0.1:4100';
const B = 'http://localhost:4200';
// A key named __proto__ is an item like any other (an own property here, computed so it is not the prototype).
const SAVED = { [A]: { cart: '2 apples' }, [B]: { token: 'b-only-value', ['__proto__']: 'kept' } };

/** A frame's sessionStorage (a Map behind the Storage methods the script calls), or one that refuses access. */
function storage(initial: Record<string, string> = {}, refuses = false) {
  const items = new Map(Object.entries(initial));
  const open = (): Map<string, string> => {
    if (refuses) throw new Error('SecurityError: access is denied for this document');
    return items;
  };
  return {
    items,
    getItem: (k: string) => open().get(k) ?? null,
    setItem: (k: string, v: string) => void open().set(k, v),
  };
}

/** Runs a script in a frame of `origin`; returns what its sessionStorage holds afterwards. */
function runIn(origin: string, script: string, frame = storage()): Record<string, string> {
  vm.runInNewContext(script, { location: { origin }, sessionStorage: frame });
  return Object.fromEntries(frame.items);
}

describe('sessionStorageSeedScript', () => {
  const scriptB = sessionStorageSeedScript(B, SAVED[B]);

  it.each<[string, string, ReturnType<typeof storage>, Record<string, string>]>([
    [
      "in a frame of its origin: writes the origin's items",
      B,
      storage(),
      { token: 'b-only-value', ['__proto__']: 'kept' },
    ],
    ['keeps an item the tab already has', B, storage({ token: 'newer' }), { token: 'newer', ['__proto__']: 'kept' }],
    ['in a frame of another origin: writes nothing', A, storage(), {}],
    ['in an opaque origin (a sandboxed frame): writes nothing', 'null', storage(), {}],
    ['where sessionStorage refuses access: writes nothing and does not throw', B, storage({}, true), {}],
  ])('%s', (_name, origin, frame, expected) => {
    expect(runIn(origin, scriptB, frame)).toEqual(expected);
  });

  it('holds its items only after the origin check (another origin returns before they become a value)', () => {
    const check = scriptB.indexOf('location.origin');
    expect(check).toBeGreaterThan(-1);
    expect(scriptB.slice(0, check)).not.toContain('b-only-value');
    expect(scriptB.indexOf('b-only-value')).toBeGreaterThan(check);
    expect(scriptB.slice(check).split('\n')[0]).toContain('return');
  });
});

describe('seedSessionStorageOnLoad', () => {
  it("adds one script per origin, each with that origin's items only; disposing removes them all", async () => {
    const added: string[] = [];
    let disposed = 0;
    const context = {
      addInitScript: (script: unknown) => {
        added.push(String(script));
        return Promise.resolve({ dispose: () => Promise.resolve(void (disposed += 1)) });
      },
    };
    const seeded = await seedSessionStorageOnLoad(context, { sessionStorage: { ...SAVED, 'http://empty.test': {} } });
    expect(added).toHaveLength(2); // an origin saved with no items gets none
    const scriptOf = (origin: string) => added.find((s) => s.includes(JSON.stringify(origin))) ?? '';
    const [forA, forB] = [scriptOf(A), scriptOf(B)];
    expect(forA).toContain('2 apples');
    expect(forA).not.toContain('b-only-value');
    expect(forB).toContain('b-only-value');
    expect(forB).not.toContain('2 apples');
    expect(runIn(A, forB)).toEqual({});
    expect(runIn(A, forA)).toEqual({ cart: '2 apples' });
    await seeded?.dispose();
    expect(disposed).toBe(2);
  });

  it('adds nothing when no origin has saved items', async () => {
    const context = { addInitScript: () => Promise.reject(new Error('not expected')) };
    expect(await seedSessionStorageOnLoad(context, { sessionStorage: {} })).toBeUndefined();
  });
});
