// One takeover lease: a session's browser lent to a person. It holds the lease's token (random, per lease), the page
// as it was when the person took it, the viewers watching it (any number; one leaving does not end the lease), the
// raw CDP tunnels opened with it, and the person's inputs, carried out one at a time in the order they came. Its end
// says what the person did: for how long, how many inputs, and the page before and after.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Page } from 'playwright';
import type { WebSocket } from 'ws';
import type { EndTakeoverResult, StartTakeoverResult } from '../../contract/activities';
import type { BrowserEnvironment } from '../environment';
import { firstLine } from '../navigation';
import { applyInput, countsAsInput } from './input';
import { parseInput } from './protocol';
import type { ServerMessage, TakeoverInput } from './protocol';
import { Screencast } from './screencast';

/** What a lease's end reports: for how long, how many inputs, the page before and after (times are ISO 8601). */
export type LeaseSummary = Omit<EndTakeoverResult, 'leaseLost'>;

export type PageFacts = StartTakeoverResult['page'];

/** A viewer whose socket holds more than this unsent is behind: frames skip it until it catches up. */
const VIEWER_BACKLOG_BYTES = 4 * 1024 * 1024;
/** A title that takes longer than this to read (a page still loading) is reported empty. */
const TITLE_CAP_MS = 2_000;

const digest = (token: string): Buffer => createHash('sha256').update(token).digest();

/** Whether a token given is `token`, compared in constant time (keeps only its digest). */
export function tokenMatcher(token: string): (given: string | undefined) => boolean {
  const expected = digest(token);
  return (given) => given !== undefined && timingSafeEqual(digest(given), expected);
}

/** The page's URL and title, without waiting long for a page that is still loading. */
export async function pageFacts(env: BrowserEnvironment): Promise<PageFacts> {
  const page = env.page;
  let timer: NodeJS.Timeout | undefined;
  const capped = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(''), TITLE_CAP_MS)));
  const title = await Promise.race([page.title().catch(() => ''), capped]).finally(() => clearTimeout(timer));
  return { url: page.url(), title };
}

export class Lease {
  readonly startedAt = new Date();
  readonly token = randomBytes(32).toString('base64url');
  /** Whether a token given is this lease's (constant time). */
  readonly authorizes = tokenMatcher(this.token);
  private inputs = 0;
  private ended = false;
  private readonly viewers = new Set<WebSocket>();
  private readonly tunnels = new Set<Duplex>();
  /** The person's inputs, one after another. */
  private queue: Promise<void> = Promise.resolve();
  private readonly screencast: Screencast;
  private readonly onPopup = (page: Page): void => this.adoptPopup(page);

  constructor(
    readonly id: string,
    private env: BrowserEnvironment,
    readonly sessionId: string | undefined,
    readonly before: PageFacts,
  ) {
    this.screencast = new Screencast(
      () => this.env.page,
      (frame) => this.broadcast(frame),
      () => this.reportBlocks(),
    );
    this.env.controller.context.on('page', this.onPopup);
  }

  get environment(): BrowserEnvironment {
    return this.env;
  }

  /**
   * The lease goes on in another environment of its session's task (a re-opened session on this worker): same token
   * and start; its viewers reconnect to see the new page.
   */
  repoint(env: BrowserEnvironment): void {
    if (env === this.env) return;
    this.env.controller.context.off('page', this.onPopup);
    this.env = env;
    this.env.controller.context.on('page', this.onPopup);
    void this.screencast.stop();
    for (const ws of this.viewers) ws.close(1012, 'the session was re-opened; connect again');
  }

  /** A viewer joined: it gets the newest frame at once and every frame after; its messages are inputs. */
  addViewer(ws: WebSocket): void {
    if (this.ended) return ws.close(1000, 'the lease ended');
    this.viewers.add(ws);
    ws.on('message', (data, isBinary) => this.receive(ws, isBinary ? undefined : String(data)));
    ws.on('close', () => {
      this.viewers.delete(ws);
      if (this.viewers.size === 0) void this.screencast.stop();
    });
    if (this.screencast.last) this.sendTo(ws, this.screencast.last);
    this.screencast.start();
  }

  /** A raw CDP connection opened with this lease's token: cut when the lease ends. */
  addTunnel(socket: Duplex): void {
    if (this.ended) return void socket.destroy();
    this.tunnels.add(socket);
    socket.once('close', () => this.tunnels.delete(socket));
  }

  /** Ends the lease: viewers told and disconnected, tunnels cut, and what the person did. */
  async end(reason: string): Promise<LeaseSummary> {
    this.ended = true;
    this.env.controller.context.off('page', this.onPopup);
    await this.screencast.stop();
    for (const ws of this.viewers) {
      this.sendTo(ws, { type: 'ended', reason });
      ws.close(1000, 'the lease ended');
    }
    for (const socket of this.tunnels) socket.destroy();
    const after = this.env.controller.isClosed ? { url: this.env.url(), title: '' } : await pageFacts(this.env);
    return {
      startedAt: this.startedAt.toISOString(),
      endedAt: new Date().toISOString(),
      inputs: this.inputs,
      urlBefore: this.before.url,
      urlAfter: after.url,
      titleBefore: this.before.title,
      titleAfter: after.title,
    };
  }

  private receive(ws: WebSocket, text: string | undefined): void {
    const parsed =
      text === undefined ? { ok: false as const, error: 'send input events as JSON text' } : parseInput(text);
    if (!parsed.ok) return this.sendTo(ws, { type: 'error', message: parsed.error });
    this.queue = this.queue.then(() => this.carryOut(ws, parsed.input));
  }

  private async carryOut(ws: WebSocket, input: TakeoverInput): Promise<void> {
    const id = input.id === undefined ? {} : { id: input.id };
    if (this.ended) return this.sendTo(ws, { type: 'error', ...id, message: 'the lease ended' });
    try {
      await applyInput(this.env, input);
      if (countsAsInput(input)) this.inputs += 1;
      this.sendTo(ws, { type: 'done', ...id, url: this.env.url() });
    } catch (err) {
      this.sendTo(ws, { type: 'error', ...id, message: firstLine(err) });
    }
  }

  /** A page the person's input opened in a new tab becomes the session's page (the old one stays open behind it). */
  private adoptPopup(page: Page): void {
    if (this.ended || page === this.env.page) return;
    void this.env.controller.adopt(page, true).catch(() => undefined);
  }

  /** Pages the URL policy refused since the last look, told to every viewer. */
  private reportBlocks(): void {
    for (const block of this.env.guard.takeBlocks()) {
      if (block.kind === 'page') this.broadcast({ type: 'blocked', url: block.url, reason: block.reason });
    }
  }

  private broadcast(message: ServerMessage): void {
    for (const ws of this.viewers) {
      if (message.type === 'frame' && ws.bufferedAmount > VIEWER_BACKLOG_BYTES) continue;
      this.sendTo(ws, message);
    }
  }

  private sendTo(ws: WebSocket, message: ServerMessage): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  }
}
