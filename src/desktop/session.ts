// One desktop session: an Xvfb display, one bubblewrap sandbox holding the window manager and the apps (and, in
// network mode 'policy', the egress proxy that is its only way out), and the primitives an agent uses on it
// (screenshot, mouse, keyboard, shell commands, window list).
import path from 'node:path';
import { DEFAULT_URL_POLICY } from '../contract/url-policy';
import type { UrlPolicy } from '../contract/url-policy';
import { desktopSupport } from '../infra/desktop-programs';
import { CommandRunner, DEFAULT_COMMAND_LIMITS } from './commands';
import type { BackgroundProcess, CommandLimits, CommandResult } from './commands';
import { startDisplay } from './display';
import type { XDisplay } from './display';
import { DesktopEgress } from './egress';
import { DesktopClosedError, DesktopUnavailableError, SandboxError } from './errors';
import { DesktopInput } from './input';
import type { MouseButton, ScrollDirection, TypingOptions } from './input';
import { Sandbox, sandboxHostUser } from './sandbox';
import { captureScreen } from './screenshot';
import { IdleClock } from '../runtime/session-lifetimes';
import { pollUntil } from './wait';
import { listWindows, windowManagerRunning } from './windows';
import type { DesktopWindow } from './windows';

export type DesktopOptions = {
  /**
   * Host directory seen as /home/user inside the sandbox (absolute; created 0700 when missing). Under a root worker
   * it is handed to the sandbox's host user on open: chowned with all it holds, made 0700.
   */
  homeDir: string;
  /**
   * The host uid (and gid) the sandbox runs as when the worker is root; default DEFAULT_SANDBOX_HOST_UID (61000).
   * Ignored when the worker is not root: the sandbox then runs as the worker's own uid.
   */
  sandboxUid?: number;
  width?: number;
  height?: number;
  /**
   * false (default): no network at all. 'policy': no network but an HTTP(S) proxy applying `urlPolicy` (the sandbox's
   * http_proxy & co. point at it; nothing else gets out). true: the host's network, no policy.
   */
  network?: DesktopNetwork;
  /** The URL policy of network 'policy' (the worker's narrowed by the task's; default DEFAULT_URL_POLICY). */
  urlPolicy?: UrlPolicy;
  /** Commands started in the background at open (default ['xterm']); open waits for the first window. */
  apps?: string[];
  typingDelayMs?: number;
  typingChunk?: number;
  /** Default timeout of runCommand (5000 ms). */
  commandTimeoutMs?: number;
  /** Largest per-call timeout of runCommand (120000 ms). */
  maxCommandTimeoutMs?: number;
  outputHeadChars?: number;
  outputTailChars?: number;
  /** How long open waits for the display, the window manager and the first app's window (default 20 s each). */
  startTimeoutMs?: number;
  log?: (line: string) => void;
};

export type DesktopNetwork = boolean | 'policy';

export class DesktopSession {
  readonly display: string;
  readonly width: number;
  readonly height: number;
  /** The host uid of the sandbox: its processes run as it; what they write in the home belongs to it. */
  readonly sandboxUid: number;
  private closing: Promise<void> | undefined;
  private readonly clock = new IdleClock();

  private constructor(
    private readonly xdisplay: XDisplay,
    private readonly sandbox: Sandbox,
    private readonly input: DesktopInput,
    private readonly commands: CommandRunner,
    readonly homeDir: string,
    private readonly egress: DesktopEgress | undefined,
  ) {
    this.display = xdisplay.name;
    this.width = xdisplay.width;
    this.height = xdisplay.height;
    this.sandboxUid = sandbox.hostUid;
  }

  /** Starts the display, the sandbox with its window manager and the apps; waits for the first app's window. */
  static async open(options: DesktopOptions): Promise<DesktopSession> {
    assertSupported();
    if (!path.isAbsolute(options.homeDir)) {
      throw new SandboxError(`homeDir must be an absolute path, got "${options.homeDir}"`);
    }
    const { log } = options;
    const hostUser = sandboxHostUser(options.sandboxUid);
    const startTimeoutMs = options.startTimeoutMs ?? 20_000;
    const width = options.width ?? 1280;
    const height = options.height ?? 800;
    const xdisplay = await startDisplay({ width, height, startTimeoutMs, log });
    let egress: DesktopEgress | undefined;
    let sandbox: Sandbox;
    try {
      if (options.network === 'policy')
        egress = await DesktopEgress.start(options.urlPolicy ?? DEFAULT_URL_POLICY, log, hostUser);
      const network = egress ? { proxySocket: egress.socketPath } : options.network === true;
      sandbox = await Sandbox.start({ ...options, network, display: xdisplay, hostUser, startTimeoutMs, log });
    } catch (err) {
      await egress?.close();
      await xdisplay.stop();
      throw err;
    }
    const session = new DesktopSession(
      xdisplay,
      sandbox,
      new DesktopInput(xdisplay, { chunkSize: options.typingChunk ?? 50, delayMs: options.typingDelayMs ?? 12 }),
      new CommandRunner(sandbox, commandLimits(options)),
      sandbox.homeDir,
      egress,
    );
    try {
      await egress?.startRelay(sandbox, startTimeoutMs, log);
      await session.startApps(options.apps ?? ['xterm'], startTimeoutMs);
    } catch (err) {
      await session.close();
      throw err;
    }
    log?.(`[desktop] session on ${session.display} ready`);
    return session;
  }

  /** True while the display and the sandbox both run and close has not been called. */
  alive(): boolean {
    return this.closing === undefined && this.xdisplay.alive() && this.sandbox.alive();
  }

  /** A PNG of the whole screen (width × height). */
  async screenshot(): Promise<Buffer> {
    return this.use(() => captureScreen(this.xdisplay));
  }

  async click(x: number, y: number, button: MouseButton = 'left', count = 1): Promise<void> {
    return this.use(() => this.input.click(x, y, button, count));
  }

  async doubleClick(x: number, y: number): Promise<void> {
    return this.use(() => this.input.doubleClick(x, y));
  }

  async rightClick(x: number, y: number): Promise<void> {
    return this.use(() => this.input.rightClick(x, y));
  }

  async move(x: number, y: number): Promise<void> {
    return this.use(() => this.input.move(x, y));
  }

  async drag(x1: number, y1: number, x2: number, y2: number): Promise<void> {
    return this.use(() => this.input.drag(x1, y1, x2, y2));
  }

  async scroll(x: number, y: number, direction: ScrollDirection, amount = 3): Promise<void> {
    return this.use(() => this.input.scroll(x, y, direction, amount));
  }

  /** One or more chords separated by spaces: "Enter", "ctrl+s", "ctrl+a Delete". */
  async key(keys: string): Promise<void> {
    return this.use(() => this.input.key(keys));
  }

  async type(text: string, options?: TypingOptions): Promise<void> {
    return this.use(() => this.input.type(text, options));
  }

  async runCommand(command: string, options?: { timeoutMs?: number }): Promise<CommandResult> {
    return this.use(() => this.commands.runCommand(command, options));
  }

  async runBackground(command: string): Promise<BackgroundProcess> {
    return this.use(() => this.commands.runBackground(command));
  }

  /** Visible top-level windows. */
  async windows(): Promise<DesktopWindow[]> {
    return this.use(() => listWindows(this.display));
  }

  /** Host path of the egress proxy's socket in network mode 'policy' (for diagnostics and leak checks). */
  get proxySocket(): string | undefined {
    return this.egress?.socketPath;
  }

  /** Host pids of the session's long-lived processes (for diagnostics and leak checks). */
  processes(): { display?: number; sandbox?: number; sandboxInit: number } {
    return { display: this.xdisplay.pid, sandbox: this.sandbox.pid, sandboxInit: this.sandbox.initPid };
  }

  /** Kills the sandbox (and with it every process inside) and the display. Idempotent; never throws. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.commands.killAll();
      await this.sandbox.close();
      await this.egress?.close();
      await this.xdisplay.stop();
    })().catch(() => undefined);
    return this.closing;
  }

  /** Synchronous last resort for process exit hooks. */
  killNow(): void {
    this.commands.killAll();
    this.sandbox.killNow();
    this.egress?.killNow();
    this.xdisplay.killNow();
  }

  /** Milliseconds since the last operation on the desktop ended; 0 while one runs (the pool's idle sweep). */
  idleFor(): number {
    return this.clock.idleFor();
  }

  /** One operation on the open desktop, timed by the idle clock. */
  private use<T>(work: () => Promise<T>): Promise<T> {
    this.ensureOpen();
    return this.clock.track(work);
  }

  private ensureOpen(): void {
    if (this.closing) throw new DesktopClosedError(`the desktop session on ${this.display} is closed`);
    if (!this.xdisplay.alive()) throw new DesktopClosedError(`the display ${this.display} is gone`);
    if (!this.sandbox.alive()) throw new DesktopClosedError(`the sandbox of ${this.display} is gone`);
  }

  /** Waits for the window manager, starts the apps, then waits until a new window is visible. */
  private async startApps(apps: readonly string[], timeoutMs: number): Promise<void> {
    await pollUntil(async () => ((await windowManagerRunning(this.display)) ? true : undefined), {
      timeoutMs,
      what: `the window manager on ${this.display}`,
    }).catch(async (err: unknown) => {
      const running = await this.runCommand('cat /proc/[0-9]*/comm | sort | uniq | tr "\\n" " "').catch(
        () => undefined,
      );
      const said = this.sandbox.recentOutput().join(' | ');
      throw new DesktopUnavailableError(
        `the window manager did not start on ${this.display} (running in the sandbox: ${running?.output.trim()}; ` +
          `it printed: ${said || 'nothing'})`,
        { cause: err },
      );
    });
    if (apps.length === 0) return;
    const before = new Set((await this.windows()).map((w) => w.id));
    const started = [];
    for (const app of apps) started.push(await this.runBackground(app));
    try {
      await pollUntil(async () => ((await this.windows()).some((w) => !before.has(w.id)) ? true : undefined), {
        timeoutMs,
        intervalMs: 100,
        what: `a window of "${apps[0]}"`,
      });
    } catch (err) {
      const logFile = started[0]?.logFile ?? '';
      const said = (await this.runCommand(`tail -c 1000 ${logFile}`).catch(() => undefined))?.output.trim();
      throw new DesktopUnavailableError(
        `no window appeared after starting ${apps.join(', ')}${said ? `; ${logFile} says: ${said}` : ''}`,
        { cause: err },
      );
    }
  }
}

/** Throws DesktopUnavailableError naming the missing programs and the apt-get line that installs them. */
function assertSupported(): void {
  const support = desktopSupport();
  if (support.ok) return;
  const missing = support.missing;
  throw new DesktopUnavailableError(
    `the desktop needs ${missing.join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not installed. ` +
      `Install with: ${support.aptLine}`,
  );
}

function commandLimits(options: DesktopOptions): CommandLimits {
  return {
    timeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_LIMITS.timeoutMs,
    maxTimeoutMs: options.maxCommandTimeoutMs ?? DEFAULT_COMMAND_LIMITS.maxTimeoutMs,
    headChars: options.outputHeadChars ?? DEFAULT_COMMAND_LIMITS.headChars,
    tailChars: options.outputTailChars ?? DEFAULT_COMMAND_LIMITS.tailChars,
  };
}
