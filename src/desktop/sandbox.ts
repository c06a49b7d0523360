// One bubblewrap sandbox per session: a long-lived process tree in its own namespaces (no network by default), a
// read-only view of the system, a private /tmp, the display's socket, and the caller's home directory at /home/user.
// Everything the model can reach runs inside it: the window manager, the apps and every command.
//
// Network: `false` keeps the sandbox's own network namespace with only a loopback; `true` shares the host's; a
// `proxySocket` keeps the private namespace too, binds that host socket (the session's egress proxy, egress.ts) at
// /run/cua/proxy.sock and points the proxy variables of the environment at the relay egress.ts starts inside.
//
// How later commands join the same sandbox: bwrap reports the host pid of its first child (pid 1 inside) on
// --info-fd; each command is started with `nsenter --target <that pid> --all --root --wd -S 1000 -G 1000`, which
// enters all of its namespaces, its root and its working directory (/home/user) as the unprivileged sandbox user,
// then `setpriv --no-new-privs` (as bwrap does for its own children). Since the commands live in the sandbox's pid
// namespace, they all die with it: when its pid 1 dies (killed by close, or by --die-with-parent when this Node
// process dies), the kernel kills every process in that namespace.
//
// Which host user the sandbox is: bwrap's user namespace maps the sandbox user (uid 1000) to the host uid that runs
// bwrap. Run by root, that would be host uid 0: no capabilities, but the owner of every root-owned file, so it could
// read /etc/shadow. So a root worker runs bwrap as an unprivileged host user (`hostUser`, DEFAULT_SANDBOX_HOST_UID
// unless configured): it first chowns the home to that user (mode 0700), then starts `unshare` (a private mount
// namespace) → `mount --bind <home> <HOME_MOUNT_POINT>` → `setpriv --reuid --regid --clear-groups --no-new-privs` →
// bwrap, which binds the mount point at /home/user. The bind is needed because bwrap resolves its sources as that
// user, who may not reach the home's real path (a run folder is 0700 root); it exists only in that namespace. Root
// still enters the sandbox with nsenter (root may enter any user namespace), and reads the home from outside. A
// worker that is not root runs bwrap as itself: the sandbox user is then the worker's own uid.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { chmod, lstat, mkdir, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { isRunning, signal, stopChild, tailLines, waitForLine } from './child';
import { SandboxError } from './errors';
import { pollUntil } from './wait';

/** Where the caller's home directory appears inside the sandbox. */
export const SANDBOX_HOME = '/home/user';
export const SANDBOX_USER = 'user';
/** The sandbox user's uid and gid inside its user namespace (on the host it is `hostUser`, see the top). */
export const SANDBOX_UID = 1000;
/**
 * The host uid and gid of the sandbox when the worker runs as root (DesktopOptions.sandboxUid changes it): its
 * processes run as, and the files it writes in its home belong to, this user. A dedicated number, not 65534
 * (nobody), which other services share. A worker that is not root runs the sandbox as its own uid instead.
 */
export const DEFAULT_SANDBOX_HOST_UID = 61000;
/**
 * A root worker binds the home on this empty directory, in a mount namespace of bwrap's own (the host's view of it
 * stays empty), for bwrap to bind at /home/user; see the top. One for all sessions, like /tmp/.X11-unix.
 */
export const HOME_MOUNT_POINT_NAME = '.cua-desktop-home';
const RUNTIME_DIR = '/tmp/runtime-user';
const READY_MARK = '__cua_sandbox_ready__';
/** Where the session's egress proxy socket appears inside the sandbox (network via a proxy only). */
export const SANDBOX_PROXY_SOCKET = '/run/cua/proxy.sock';
/** The relay inside the sandbox listens here, on the sandbox's own loopback, and hands connections to the socket. */
export const SANDBOX_PROXY_PORT = 3128;
export const SANDBOX_PROXY_URL = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;

/**
 * `false`: a private network namespace with only a loopback. `true`: the host's network. `{ proxySocket }`: the
 * private namespace, plus that host UNIX socket (an HTTP(S) proxy) bound at SANDBOX_PROXY_SOCKET.
 */
export type SandboxNetwork = boolean | { proxySocket: string };

/** A host user and group, by number. */
export type HostUser = { uid: number; gid: number };

export type SandboxOptions = {
  /**
   * Absolute host path bound read-write at /home/user; created with mode 0700 when missing. With `hostUser`, it and
   * everything in it are chowned to that user and it is made 0700.
   */
  homeDir: string;
  /** Run bwrap as this host user (the worker is root; see sandboxHostUser). Absent: as this process's user. */
  hostUser?: HostUser;
  /** The display the sandbox may talk to. */
  display: { name: string; socketPath: string };
  /** Default false: a private network namespace with only a loopback. */
  network?: SandboxNetwork;
  /** Started inside the sandbox at once, as a child of its init (default: openbox). Empty: none. */
  windowManager?: readonly string[];
  startTimeoutMs?: number;
  log?: (line: string) => void;
};

/**
 * The proxy variables of a sandbox whose only way out is the proxy. `no_proxy` is `<-loopback>`: no host name
 * matches it (curl, Python, wget send everything to the proxy), and it tells Chromium not to send loopback addresses
 * around the proxy either — so 127.0.0.1 means the same to every program: the host's, under the URL policy.
 */
export function proxyEnv(): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const name of ['http_proxy', 'https_proxy']) vars[name] = vars[name.toUpperCase()] = SANDBOX_PROXY_URL;
  vars['no_proxy'] = vars['NO_PROXY'] = '<-loopback>';
  return vars;
}

/** The whole environment of every process in the sandbox (with the proxy variables when `proxied`). */
export function sandboxEnv(displayName: string, proxied = false): Record<string, string> {
  return {
    HOME: SANDBOX_HOME,
    USER: SANDBOX_USER,
    LOGNAME: SANDBOX_USER,
    PATH: '/usr/local/bin:/usr/bin:/bin',
    DISPLAY: displayName,
    LANG: 'C.UTF-8',
    TERM: 'xterm',
    XDG_RUNTIME_DIR: RUNTIME_DIR,
    ...(proxied ? proxyEnv() : {}),
  };
}

/** The sandbox's own /etc/passwd and /etc/group (the host's are hidden): root and the sandbox user. */
export const ETC_FILES = {
  passwd: `root:x:0:0:root:/root:/bin/sh\n${SANDBOX_USER}:x:${SANDBOX_UID}:${SANDBOX_UID}::${SANDBOX_HOME}:/bin/bash\n`,
  group: `root:x:0:\n${SANDBOX_USER}:x:${SANDBOX_UID}:\n`,
};
/** bwrap reads the sandbox's info (3), passwd (4) and group (5) on these file descriptors. */
const INFO_FD = 3;
const PASSWD_FD = 4;
const GROUP_FD = 5;

/** bwrap's arguments, up to and including `--`. */
export function bwrapArgs(options: Pick<SandboxOptions, 'homeDir' | 'display' | 'network'>): string[] {
  const { network = false } = options;
  const args = ['--unshare-all', ...(network === true ? ['--share-net'] : []), '--die-with-parent', '--new-session'];
  args.push('--uid', String(SANDBOX_UID), '--gid', String(SANDBOX_UID), '--hostname', 'desktop');
  args.push('--clearenv');
  const env = sandboxEnv(options.display.name, typeof network === 'object');
  for (const [key, value] of Object.entries(env)) args.push('--setenv', key, value);
  for (const dir of ['/usr', '/bin', '/lib', '/sbin', '/etc']) args.push('--ro-bind', dir, dir);
  args.push('--ro-bind-try', '/lib64', '/lib64');
  // The system's font cache; without it every fresh home builds its own (two seconds before the first window).
  args.push('--ro-bind-try', '/var/cache/fontconfig', '/var/cache/fontconfig');
  args.push('--ro-bind-data', String(PASSWD_FD), '/etc/passwd', '--ro-bind-data', String(GROUP_FD), '/etc/group');
  // A private /dev with only the harmless devices, and shared memory (Chromium needs a writable /dev/shm).
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/dev/shm', '--tmpfs', '/tmp');
  args.push('--bind', options.display.socketPath, options.display.socketPath);
  // A socket's mount being read-only does not stop connecting to it; it stops replacing it.
  if (typeof network === 'object') args.push('--ro-bind', network.proxySocket, SANDBOX_PROXY_SOCKET);
  args.push('--bind', options.homeDir, SANDBOX_HOME, '--chdir', SANDBOX_HOME);
  // bwrap builds the sandbox's root (and /dev) on tmpfs; make them read-only so only the home, /tmp and /dev/shm
  // can be written.
  args.push('--remount-ro', '/dev', '--remount-ro', '/');
  args.push('--info-fd', String(INFO_FD), '--');
  return args;
}

/**
 * Who bwrap runs as: `sandboxUid` (default DEFAULT_SANDBOX_HOST_UID, also as gid) when this worker is root;
 * undefined otherwise (bwrap runs as the worker, and the sandbox user is the worker's uid). Throws SandboxError for
 * an id that is not a positive 32-bit integer (0 would be root again; 4294967295 means "none" to the kernel).
 */
export function sandboxHostUser(
  sandboxUid: number = DEFAULT_SANDBOX_HOST_UID,
  workerUid: number | undefined = process.getuid?.(),
): HostUser | undefined {
  if (!Number.isInteger(sandboxUid) || sandboxUid <= 0 || sandboxUid >= 0xffffffff) {
    throw new SandboxError(`sandboxUid must be an integer from 1 to 4294967294, got ${sandboxUid}`);
  }
  return workerUid === 0 ? { uid: sandboxUid, gid: sandboxUid } : undefined;
}

// Run by `unshare` (root, in a fresh private mount namespace): "$1" is the home, "$2" the mount point, the rest the
// command to exec once the home is bound there.
const STAGE_SCRIPT = 'mount --bind -- "$1" "$2" || exit 1; shift 2; exec "$@"';

/**
 * The program and arguments that start bwrap with `bwrapArgv` (its arguments and the sandbox's command). With
 * `staged` (a root worker): unshare a private mount namespace, bind the home on the mount point there, then become
 * the host user (no groups, no capabilities, no-new-privs) and exec bwrap, whose arguments bind the mount point.
 */
export function launchCommand(
  bwrapArgv: readonly string[],
  staged?: { hostUser: HostUser; homeDir: string; mountPoint: string },
): { file: string; args: string[] } {
  if (!staged) return { file: 'bwrap', args: [...bwrapArgv] };
  const { hostUser, homeDir, mountPoint } = staged;
  const args = ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', STAGE_SCRIPT, 'cua-stage'];
  args.push(homeDir, mountPoint, 'setpriv', `--reuid=${hostUser.uid}`, `--regid=${hostUser.gid}`, '--clear-groups');
  args.push('--no-new-privs', '--', 'bwrap', ...bwrapArgv);
  return { file: 'unshare', args };
}

export class Sandbox {
  private constructor(
    private readonly bwrap: ChildProcess,
    /** Host pid of bwrap's first child: pid 1 inside the sandbox, the target of nsenter. */
    readonly initPid: number,
    /** Its pid namespace as /proc/<pid>/ns/pid names it ("pid:[4026532181]"), to tell it from a reused pid. */
    private readonly pidNamespace: string,
    readonly env: Readonly<Record<string, string>>,
    /** The host directory bound at /home/user (resolved). */
    readonly homeDir: string,
    /** The last lines its init and window manager printed (bwrap's stdout, then its stderr). */
    readonly recentOutput: () => string[],
    /** The host uid the sandbox user is: its processes run as it, the files it writes belong to it. */
    readonly hostUid: number,
  ) {}

  /** Host pid of bwrap itself. */
  get pid(): number | undefined {
    return this.bwrap.pid;
  }

  /** Creates the home if needed, starts bwrap and waits until its init runs inside the finished sandbox. */
  static async start(options: SandboxOptions): Promise<Sandbox> {
    const { hostUser } = options;
    const homeDir = await prepareHome(options.homeDir, hostUser);
    await checkDisplaySocket(options.display.socketPath, hostUser);
    const mountPoint = hostUser ? await homeMountPoint() : undefined;
    const wm = options.windowManager ?? ['openbox', '--sm-disable'];
    // $@ is the window manager; the init shell then becomes `sleep infinity`, which keeps the sandbox up even if
    // the window manager dies.
    const init = `mkdir -m 700 -p "$XDG_RUNTIME_DIR"; echo ${READY_MARK}; [ $# -gt 0 ] && "$@" & exec sleep infinity`;
    const bound = bwrapArgs({ ...options, homeDir: mountPoint ?? homeDir });
    const command = launchCommand(
      [...bound, '/bin/sh', '-c', init, 'init', ...wm],
      hostUser && mountPoint ? { hostUser, homeDir, mountPoint } : undefined,
    );
    // Through unshare, sh and setpriv, each exec'ing the next: the pid stays bwrap's, a child of this process.
    const bwrap = spawn(command.file, command.args, { stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'] });
    const fds: readonly unknown[] = bwrap.stdio;
    writeAndClose(fds[PASSWD_FD], ETC_FILES.passwd);
    writeAndClose(fds[GROUP_FD], ETC_FILES.group);
    const stderrTail = tailLines(bwrap.stderr, '[sandbox]', options.log);
    const stdoutTail = tailLines(bwrap.stdout, '[sandbox]', options.log);
    try {
      const [info] = await Promise.all([
        readInfo(bwrap, fds[INFO_FD] instanceof Readable ? fds[INFO_FD] : null),
        waitForLine(bwrap, bwrap.stdout, READY_MARK, options.startTimeoutMs ?? 10_000),
      ]);
      const hostUid = hostUser?.uid ?? process.getuid?.() ?? -1;
      options.log?.(
        `[sandbox] bwrap pid ${bwrap.pid}, init pid ${info.childPid}, home ${homeDir}, host uid ${hostUid}`,
      );
      const env = sandboxEnv(options.display.name, typeof options.network === 'object');
      const output = (): string[] => [...stdoutTail(), ...stderrTail()];
      return new Sandbox(bwrap, info.childPid, `pid:[${info.pidNamespace}]`, env, homeDir, output, hostUid);
    } catch (err) {
      await stopChild(bwrap, 500);
      const said = stderrTail().slice(-5).join(' | ');
      const why = err instanceof Error ? err.message : String(err);
      throw new SandboxError(`the sandbox did not start: ${why}${said ? ` (bwrap said: ${said})` : ''}`, {
        cause: err,
      });
    }
  }

  /** bwrap runs and its init is still the process we started (not a later process that reused its pid). */
  alive(): boolean {
    return isRunning(this.bwrap) && this.initIsOurs();
  }

  /**
   * Starts `argv` inside the sandbox, as the sandbox user, in /home/user, with exactly the sandbox environment.
   * `detached` gives the host-side process its own process group, so the whole command can be killed at once.
   */
  spawnInside(argv: readonly string[], options: { stdio: StdioOptions; detached?: boolean }): ChildProcess {
    if (!this.alive()) throw new SandboxError('the sandbox is gone');
    const enter = ['--target', String(this.initPid), '--all', '--root', '--wd'];
    enter.push('--setuid', String(SANDBOX_UID), '--setgid', String(SANDBOX_UID));
    const args = [...enter, '--', '/usr/bin/setpriv', '--no-new-privs', '--', ...argv];
    return spawn('nsenter', args, { stdio: options.stdio, detached: options.detached, env: { ...this.env } });
  }

  /**
   * Kills the sandbox and everything in it. Killing pid 1 of the sandbox makes the kernel kill every other process
   * in its pid namespace; bwrap then exits. Never throws.
   */
  async close(): Promise<void> {
    this.killInit();
    await stopChild(this.bwrap, 1000);
    await pollUntil(async () => (this.initIsOurs() ? undefined : true), {
      timeoutMs: 2000,
      what: 'the sandbox to end',
    }).catch(() => undefined);
  }

  /** Synchronous last resort for process exit hooks. */
  killNow(): void {
    this.killInit();
    signal(this.bwrap, 'SIGKILL');
  }

  private killInit(): void {
    if (!this.initIsOurs()) return;
    try {
      process.kill(this.initPid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }

  private initIsOurs(): boolean {
    try {
      return readlinkSync(`/proc/${this.initPid}/ns/pid`) === this.pidNamespace;
    } catch {
      return false; // gone (a zombie's namespace links cannot be read either)
    }
  }
}

/**
 * Checks the home path and creates it (0700) when missing; returns its real path. With `hostUser`, hands it over:
 * everything in it (what an earlier session or the worker wrote too) is chowned to that user, and it is made 0700.
 */
async function prepareHome(homeDir: string, hostUser: HostUser | undefined): Promise<string> {
  if (!path.isAbsolute(homeDir)) throw new SandboxError(`homeDir must be an absolute path, got "${homeDir}"`);
  const existing = await stat(homeDir).catch(() => undefined);
  if (existing && !existing.isDirectory()) throw new SandboxError(`homeDir ${homeDir} is not a directory`);
  if (!existing) {
    await mkdir(homeDir, { recursive: true, mode: 0o700 });
    await chmod(homeDir, 0o700);
  }
  // The real path is what gets bound; never the host's root.
  const resolved = await realpath(homeDir);
  if (resolved === '/') throw new SandboxError(`homeDir ${homeDir} is the host's root directory`);
  if (hostUser) {
    await chownTree(resolved, hostUser);
    await chmod(resolved, 0o700);
  }
  return resolved;
}

/**
 * `chown -R uid:gid dir`: with -R, chown neither follows symbolic links nor changes what they point to (it changes
 * the links), so a link the sandbox left in its home cannot hand it a host file.
 */
function chownTree(dir: string, user: HostUser): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('chown', ['-R', '--', `${user.uid}:${user.gid}`, dir], { timeout: 60_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const why = stderr.toString().trim().split('\n').slice(0, 3).join(' | ') || err.message;
      reject(new SandboxError(`could not hand the home ${dir} to uid ${user.uid}: ${why}`, { cause: err }));
    });
  });
}

/**
 * The display's socket exists and, when bwrap runs as `hostUser`, that user may connect to it (Xvfb makes it
 * srwxrwxrwx, in the world-writable /tmp/.X11-unix).
 */
async function checkDisplaySocket(socketPath: string, hostUser: HostUser | undefined): Promise<void> {
  const socket = await stat(socketPath).catch(() => undefined);
  if (!socket) throw new SandboxError(`the display socket ${socketPath} does not exist`);
  if (hostUser && socket.uid !== hostUser.uid && (socket.mode & 0o002) === 0) {
    const mode = (socket.mode & 0o777).toString(8);
    throw new SandboxError(`the display socket ${socketPath} (mode ${mode}) cannot be used by uid ${hostUser.uid}`);
  }
}

/**
 * The mount point of a root worker's homes (created when missing). Refused unless it is a real directory owned by
 * root and writable by root only: nobody may swap it for a link to somewhere else.
 */
async function homeMountPoint(): Promise<string> {
  const dir = path.join(os.tmpdir(), HOME_MOUNT_POINT_NAME);
  await mkdir(dir, { mode: 0o755 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw new SandboxError(`could not create ${dir}: ${err.message}`, { cause: err });
  });
  const info = await lstat(dir);
  if (!info.isDirectory() || info.uid !== 0 || (info.mode & 0o022) !== 0) {
    throw new SandboxError(`${dir} must be a directory owned by root and writable only by root`);
  }
  return dir;
}

/** Hands bwrap the content of a file on one of its pipes (it reads until end of file). */
function writeAndClose(pipe: unknown, text: string): void {
  if (!(pipe instanceof Writable)) return;
  pipe.on('error', () => undefined); // bwrap died first: its exit is reported elsewhere
  pipe.end(text);
}

type BwrapInfo = { childPid: number; pidNamespace: number };

/** bwrap writes `{ "child-pid": N, "pid-namespace": M, … }` on its --info-fd once the namespaces exist. */
function readInfo(bwrap: ChildProcess, fd: Readable | null): Promise<BwrapInfo> {
  if (!fd) return Promise.reject(new Error('no --info-fd pipe'));
  return new Promise((resolve, reject) => {
    let text = '';
    fd.setEncoding('utf8');
    fd.on('data', (chunk: string) => {
      text += chunk;
      if (!text.includes('}')) return;
      try {
        const info = JSON.parse(text) as Record<string, unknown>;
        const [childPid, pidNamespace] = [info['child-pid'], info['pid-namespace']];
        if (typeof childPid === 'number' && typeof pidNamespace === 'number') resolve({ childPid, pidNamespace });
        else reject(new Error(`bwrap's info lacks child-pid or pid-namespace: ${text}`));
      } catch (err) {
        reject(new Error(`bwrap's info is not JSON: ${text}`, { cause: err }));
      }
    });
    fd.once('close', () => reject(new Error('bwrap reported no child pid')));
    bwrap.once('error', (err) => reject(new Error(`could not run bwrap (is bubblewrap installed?): ${err.message}`)));
  });
}
