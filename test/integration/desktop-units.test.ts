// The desktop layer's pure parts, table-driven: key names to xdotool keysyms, screen coordinates, typing chunks,
// head-and-tail output, PNG sizes, window ids, and the bubblewrap command line (what it binds, and what it must not).
import { describe, expect, it } from 'vitest';
import { SandboxError, UnknownKeyError, normalizeKeys, pngSize } from '../../src/desktop';
import { chunkText, screenPoint } from '../../src/desktop/input';
import { HeadTailBuffer } from '../../src/desktop/output';
import {
  DEFAULT_SANDBOX_HOST_UID,
  bwrapArgs,
  launchCommand,
  sandboxEnv,
  sandboxHostUser,
} from '../../src/desktop/sandbox';
import { parseWindowIds } from '../../src/desktop/windows';

describe('normalizeKeys', () => {
  it.each([
    ['Enter', ['Return']],
    ['enter', ['Return']],
    ['Return', ['Return']],
    ['esc', ['Escape']],
    ['ctrl+s', ['ctrl+s']],
    ['Ctrl-S', ['ctrl+s']],
    ['CTRL+SHIFT+T', ['ctrl+shift+t']],
    ['alt+F4', ['alt+F4']],
    ['backspace', ['BackSpace']],
    ['tab', ['Tab']],
    ['space', ['space']],
    ['up down left right', ['Up', 'Down', 'Left', 'Right']],
    ['pagedown PageUp', ['Next', 'Prior']],
    ['home end delete', ['Home', 'End', 'Delete']],
    ['f1 F12', ['F1', 'F12']],
    ['super', ['super']],
    ['ctrl+a Delete', ['ctrl+a', 'Delete']],
    ['ctrl++ ctrl+-', ['ctrl+plus', 'ctrl+minus']],
    ['A', ['A']],
    ['ctrl+alt+Delete', ['ctrl+alt+Delete']],
  ])('%s → %j', (keys, expected) => {
    expect(normalizeKeys(keys)).toEqual(expected);
  });

  it.each(['ctrl+frobnicate', 'hyper', 'f25', '', 'ctrl+'])('refuses %j with examples of valid names', (keys) => {
    expect(() => normalizeKeys(keys)).toThrow(UnknownKeyError);
    expect(() => normalizeKeys(keys)).toThrow(/Enter, Escape, Tab/);
  });
});

describe('screenPoint', () => {
  const screen = { name: ':1', width: 1280, height: 800 };

  it.each([
    [0, 0, { x: 0, y: 0 }],
    [1279, 799, { x: 1279, y: 799 }],
    [10.4, 20.6, { x: 10, y: 21 }],
  ])('(%d, %d) is on the screen', (x, y, expected) => {
    expect(screenPoint(x, y, screen)).toEqual(expected);
  });

  it.each([
    [-1, 0],
    [1280, 0],
    [0, 800],
    [Number.NaN, 5],
  ])('(%d, %d) is refused', (x, y) => {
    expect(() => screenPoint(x, y, screen)).toThrow(/outside the 1280x800 screen|must be numbers/);
  });
});

describe('chunkText', () => {
  it.each([
    ['', 3, []],
    ['abcdefg', 3, ['abc', 'def', 'g']],
    ['😀😀😀', 2, ['😀😀', '😀']],
  ])('%j in pieces of %d', (text, size, expected) => {
    expect(chunkText(text, size)).toEqual(expected);
  });
});

describe('HeadTailBuffer', () => {
  it('keeps short output whole', () => {
    const buffer = new HeadTailBuffer(5, 5);
    for (const piece of ['ab', 'cdef', 'ghij']) buffer.append(piece);
    expect([buffer.toString(), buffer.truncated]).toEqual(['abcdefghij', false]);
  });

  it('keeps the head and the tail of long output, fed in small pieces', () => {
    const buffer = new HeadTailBuffer(4, 3);
    for (const ch of 'abcdefghijklmnopqrstuvwxyz') buffer.append(ch);
    expect(buffer.toString()).toBe('abcd\n[… 19 characters omitted …]\nxyz');
    expect(buffer.truncated).toBe(true);
  });
});

describe('pngSize and parseWindowIds', () => {
  it('reads the IHDR size and refuses other bytes', () => {
    const header = Buffer.from('89504e470d0a1a0a0000000d49484452000005000000032008020000', 'hex');
    expect(pngSize(header)).toEqual({ width: 1280, height: 800 });
    expect(pngSize(Buffer.from('GIF89a not a png at all'))).toBeUndefined();
  });

  it('reads the window ids of an xprop line', () => {
    expect(parseWindowIds('_NET_CLIENT_LIST(WINDOW): window id # 0x40000c, 0x60000d')).toEqual([0x40000c, 0x60000d]);
    expect(parseWindowIds('_NET_CLIENT_LIST:  no such atom on any window.')).toEqual([]);
  });
});

describe('bwrapArgs', () => {
  const display = { name: ':12', socketPath: '/tmp/.X11-unix/X12' };
  const args = bwrapArgs({ homeDir: '/srv/runs/r1/home', display });
  const pairs = (flag: string): string[] =>
    args.flatMap((a, i) => (a === flag ? [`${args[i + 1]} -> ${args[i + 2]}`] : []));

  it('shares nothing by default, dies with its parent, and sets exactly the sandbox environment', () => {
    expect(args.slice(0, 3)).toEqual(['--unshare-all', '--die-with-parent', '--new-session']);
    expect(args).toContain('--clearenv');
    const env = Object.fromEntries(args.flatMap((a, i) => (a === '--setenv' ? [[args[i + 1], args[i + 2]]] : [])));
    expect(env).toEqual(sandboxEnv(':12'));
    expect(bwrapArgs({ homeDir: '/h', display, network: true })).toContain('--share-net');
  });

  it('binds the system read-only and only the home and the display socket read-write', () => {
    expect(pairs('--bind')).toEqual(['/tmp/.X11-unix/X12 -> /tmp/.X11-unix/X12', '/srv/runs/r1/home -> /home/user']);
    expect(pairs('--ro-bind')).toEqual([
      '/usr -> /usr',
      '/bin -> /bin',
      '/lib -> /lib',
      '/sbin -> /sbin',
      '/etc -> /etc',
    ]);
    expect(pairs('--ro-bind-data')).toEqual(['4 -> /etc/passwd', '5 -> /etc/group']);
    expect(args.join(' ')).not.toMatch(/\/work|\/root|\/proc\/self/);
    expect(pairs('--ro-bind-try')).toEqual(['/lib64 -> /lib64', '/var/cache/fontconfig -> /var/cache/fontconfig']);
    expect(args.slice(-5)).toEqual(['--remount-ro', '/', '--info-fd', '3', '--']);
  });
});

describe('the sandbox host user', () => {
  it('is DEFAULT_SANDBOX_HOST_UID (or sandboxUid) under a root worker, and the worker itself otherwise', () => {
    expect(DEFAULT_SANDBOX_HOST_UID).toBe(61000);
    expect(sandboxHostUser(undefined, 0)).toEqual({ uid: 61000, gid: 61000 });
    expect(sandboxHostUser(4000, 0)).toEqual({ uid: 4000, gid: 4000 });
    expect(sandboxHostUser(undefined, 1000)).toBeUndefined();
    expect(sandboxHostUser(4000, 1000)).toBeUndefined();
  });

  it.each([0, -1, 1.5, Number.NaN, 4294967295])('refuses sandboxUid %d', (uid) => {
    expect(() => sandboxHostUser(uid, 0)).toThrow(SandboxError);
  });

  it('starts bwrap itself when not root, and as that user in a private mount namespace when root', () => {
    expect(launchCommand(['--unshare-all', '--', 'sh'])).toEqual({
      file: 'bwrap',
      args: ['--unshare-all', '--', 'sh'],
    });
    const staged = launchCommand(['--unshare-all', '--', 'sh'], {
      hostUser: { uid: 61000, gid: 61001 },
      homeDir: '/srv/runs/r1/home',
      mountPoint: '/tmp/.cua-desktop-home',
    });
    expect(staged.file).toBe('unshare');
    expect(staged.args.slice(0, 4)).toEqual(['--mount', '--propagation', 'private', '--']);
    const script = staged.args.indexOf('-c');
    expect(staged.args.slice(script - 1, script)).toEqual(['/bin/sh']);
    // After the script and its $0: the home, the mount point, then the command it execs.
    expect(staged.args.slice(script + 3, script + 5)).toEqual(['/srv/runs/r1/home', '/tmp/.cua-desktop-home']);
    expect(staged.args.slice(script + 5)).toEqual([
      'setpriv',
      '--reuid=61000',
      '--regid=61001',
      '--clear-groups',
      '--no-new-privs',
      '--',
      'bwrap',
      '--unshare-all',
      '--',
      'sh',
    ]);
  });
});
