// A takeover's viewer as a test (or the run console) drives it: the screencast-and-input WebSocket of a lease, every
// message kept, an input's answer waited for by its id.
import { WebSocket } from 'ws';
import type { ServerMessage, TakeoverInput } from '../../src/browser/takeover/protocol';

/** A viewer over the socket: every message kept; an input's answer waited for by its id. */
export class Viewer {
  readonly messages: ServerMessage[] = [];
  private readonly waiters = new Set<() => void>();
  private nextId = 1;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)) as ServerMessage);
      for (const wake of this.waiters) wake();
    });
  }

  static open(url: string): Promise<Viewer> {
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Viewer(ws)));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** The first message (kept or coming) that `match` accepts. */
  next<T extends ServerMessage>(match: (m: ServerMessage) => m is T, timeoutMs = 15_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const found = this.messages.find(match);
        if (!found) return;
        cleanup();
        resolve(found);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no such message; got ${this.messages.map((m) => m.type).join(', ')}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(look);
      };
      this.waiters.add(look);
      look();
    });
  }

  /** Sends an input and waits for its answer (done or error). */
  async send(input: TakeoverInput): Promise<ServerMessage> {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ ...input, id }));
    return this.next((m): m is ServerMessage => (m.type === 'done' || m.type === 'error') && m.id === id);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

export const isFrame = (m: ServerMessage): m is Extract<ServerMessage, { type: 'frame' }> => m.type === 'frame';
