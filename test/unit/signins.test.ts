// Saved sign-ins in the run store: names, save/load/list/remove, encryption at rest with the codec's key (a sealed
// sign-in refused where no key is configured), a list that never shows a cookie's value, and only the task's own
// state kept (the runtime's own cookies left out).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Sealer } from '../../src/codec/sealed';
import { LocalRunStore } from '../../src/trajectory/store';
import { SAME_TAB_SEARCH_COOKIE, isRuntimeCookie } from '../../src/contract/runtime-cookies';
import { SigninError, SigninStore, checkSigninName, storageHosts, taskStorage } from '../../src/trajectory/signins';
import type { SavedStorage } from '../../src/trajectory/signins';

const key = (id: string, byte: number) => ({ id, key: Buffer.alloc(32, byte) });
const sealer = (acceptPlaintext = true) => new Sealer({ active: key('k1', 1), keys: [key('k1', 1)] }, acceptPlaintext);
const STORAGE: SavedStorage = {
  cookies: [{ name: 'session', value: 'SECRET-COOKIE-VALUE', domain: '.shop.example', path: '/' }],
  origins: [{ origin: 'https://app.example:8443', localStorage: [{ name: 'token', value: 'LOCAL-VALUE' }] }],
};

let dirs: string[] = [];
const newStore = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'signins-'));
  dirs.push(dir);
  return { dir, store: new LocalRunStore(dir) };
};
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe('sign-in names', () => {
  it.each(['shop', 'a', 'work.mail-2_x', '0day', 'x'.repeat(64)])('accepts %s', (name) => {
    expect(checkSigninName(name)).toBe(name);
  });
  it.each(['', 'Shop', '-x', '.x', '_x', 'a/b', '../x', 'a b', 'x'.repeat(65), 'é'])('refuses %j', (name) => {
    expect(() => checkSigninName(name)).toThrow(SigninError);
  });
  it('refuses a bad name in every store call', async () => {
    const signins = new SigninStore(newStore().store);
    await expect(signins.load('../etc')).rejects.toThrow(/sign-in name/);
    await expect(signins.save('A', STORAGE, 't1')).rejects.toThrow(/sign-in name/);
    await expect(signins.remove('a/b')).rejects.toThrow(/sign-in name/);
  });
});

describe('the sign-in store', () => {
  it('names the hosts of cookies and origins', () => {
    expect(storageHosts(STORAGE)).toEqual(['app.example:8443', 'shop.example']);
  });

  it('saves, lists, loads and removes a sign-in without encryption', async () => {
    const { dir, store } = newStore();
    const signins = new SigninStore(store);
    const saved = await signins.save('shop', STORAGE, 'task-1');
    expect(saved).toMatchObject({
      name: 'shop',
      fromTask: 'task-1',
      encrypted: false,
      hosts: ['app.example:8443', 'shop.example'],
    });
    expect(await signins.list()).toEqual([saved]);
    expect(JSON.stringify(await signins.list())).not.toContain('SECRET-COOKIE-VALUE');
    expect((await signins.load('shop'))?.storage).toEqual(STORAGE);
    expect(readFileSync(path.join(dir, '_signins', 'shop.json'), 'utf8')).toContain('SECRET-COOKIE-VALUE');
    expect(await signins.remove('shop')).toBe(true);
    expect(await signins.remove('shop')).toBe(false);
    expect(await signins.load('shop')).toBeUndefined();
    expect(await signins.list()).toEqual([]);
    expect(readFileSync(path.join(dir, '_signins', 'shop.json'), 'utf8')).toBe('');
  });

  it("leaves out the runtime's own cookies and origins that are no web page's", async () => {
    const runtime = { ...SAME_TAB_SEARCH_COOKIE, expires: -1, httpOnly: false, secure: false, sameSite: 'Lax' };
    const state: SavedStorage = {
      cookies: [
        ...STORAGE.cookies,
        runtime,
        { name: 'MUID', value: 'search-visit', domain: '.bing.com', path: '/' }, // the task searched: its own
      ],
      origins: [
        ...STORAGE.origins,
        { origin: 'null', localStorage: [{ name: 'x', value: '1' }] },
        { origin: 'chrome-error://chromewebdata', localStorage: [] },
      ],
    };
    expect(isRuntimeCookie(runtime)).toBe(true);
    // Whatever its value (a site may rewrite it), it is the runtime's: the next session sets it again.
    expect(isRuntimeCookie({ name: runtime.name, domain: 'Bing.com' })).toBe(true);
    expect(isRuntimeCookie({ name: 'SRCHHPGUSR', domain: '.shop.example' })).toBe(false);
    const own = taskStorage(state);
    expect(own.cookies.map((c) => c.name)).toEqual(['session', 'MUID']);
    expect(own.origins).toEqual(STORAGE.origins);
    const signins = new SigninStore(newStore().store);
    const saved = await signins.save('shop', { ...state, cookies: [...STORAGE.cookies, runtime] }, 'task-1');
    expect(saved.hosts).toEqual(['app.example:8443', 'shop.example']);
    expect((await signins.load('shop'))?.storage).toEqual(STORAGE);
  });

  it('encrypts at rest with the codec key and opens with it', async () => {
    const { dir, store } = newStore();
    const signins = new SigninStore(store, sealer());
    const saved = await signins.save('shop', STORAGE, 'task-1');
    expect(saved.encrypted).toBe(true);
    const file = readFileSync(path.join(dir, '_signins', 'shop.json'), 'utf8');
    expect(file).not.toContain('SECRET-COOKIE-VALUE');
    expect(file).not.toContain('LOCAL-VALUE');
    expect((await signins.load('shop'))?.storage).toEqual(STORAGE);
  });

  it('refuses an encrypted sign-in without the key, or with another key', async () => {
    const { store } = newStore();
    await new SigninStore(store, sealer()).save('shop', STORAGE, 'task-1');
    await expect(new SigninStore(store).load('shop')).rejects.toThrow(/sign-in 'shop' is encrypted: configure its key/);
    const other = new Sealer({ active: key('k2', 2), keys: [key('k2', 2)] });
    await expect(new SigninStore(store, other).load('shop')).rejects.toThrow(/key id 'k1'.*not configured/);
    const sameIdOtherKey = new Sealer({ active: key('k1', 9), keys: [key('k1', 9)] });
    await expect(new SigninStore(store, sameIdOtherKey).load('shop')).rejects.toThrow(/does not authenticate/);
  });

  it('reads a plain sign-in with encryption on, unless plaintext is refused', async () => {
    const { store } = newStore();
    await new SigninStore(store).save('shop', STORAGE, 'task-1');
    expect((await new SigninStore(store, sealer()).load('shop'))?.storage).toEqual(STORAGE);
    await expect(new SigninStore(store, sealer(false)).load('shop')).rejects.toThrow(/acceptPlaintext is false/);
  });

  it('replaces a sign-in saved again under the same name', async () => {
    const { store } = newStore();
    const signins = new SigninStore(store);
    await signins.save('shop', STORAGE, 'task-1');
    const rotated = { ...STORAGE, cookies: [{ ...STORAGE.cookies[0]!, value: 'ROTATED' }] };
    await signins.save('shop', rotated, 'task-2');
    const loaded = await signins.load('shop');
    expect(loaded?.fromTask).toBe('task-2');
    expect(loaded?.storage.cookies[0]?.value).toBe('ROTATED');
    expect((await signins.list()).map((s) => s.name)).toEqual(['shop']);
  });
});
