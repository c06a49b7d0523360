// Subscriptions to task resources (resources/subscribe, resources/unsubscribe): while a client holds one, a watcher
// polls the task's status through the typed client and sends `notifications/resources/updated` for each subscribed
// URI of that task when its status, pending question, step or closing changes. One watcher per task per session (a
// report and a steps subscription share it); it stops on the last unsubscribe, when the session closes, and once the
// task has closed (nothing changes after that).
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { TaskSnapshot } from '../client/client';
import { sleep } from '../src/common/sleep';
import type { McpDeps } from './deps';
import { parseTaskResourceUri, taskStatus } from './resources';

/** What a subscriber is told about: a change of any part of this string. */
export function watchKey(snap: TaskSnapshot): string {
  return JSON.stringify([snap.status, snap.question?.id ?? null, snap.step, snap.closed]);
}

interface Watched {
  uris: Set<string>;
  stop: AbortController;
}

/** The watchers of one session. */
export class TaskWatchers {
  private readonly watched = new Map<string, Watched>();
  private closed = false;

  constructor(
    private readonly deps: McpDeps,
    private readonly notify: (uri: string) => Promise<void>,
  ) {}

  /** Subscribes to `uri`; an unknown task or a URI not of a task resource is refused (ResourceError). */
  async subscribe(uri: string): Promise<void> {
    const { id } = parseTaskResourceUri(uri);
    const first = await taskStatus(this.deps, id);
    if (this.closed) return;
    const entry = this.watched.get(id);
    if (entry) return void entry.uris.add(uri);
    const fresh: Watched = { uris: new Set([uri]), stop: new AbortController() };
    this.watched.set(id, fresh);
    void this.watch(id, fresh, first);
  }

  unsubscribe(uri: string): void {
    const { id } = parseTaskResourceUri(uri);
    const entry = this.watched.get(id);
    if (!entry) return;
    entry.uris.delete(uri);
    if (entry.uris.size === 0) {
      entry.stop.abort();
      this.watched.delete(id);
    }
  }

  /** The tasks watched now (for tests and logs). */
  get tasks(): string[] {
    return [...this.watched.keys()];
  }

  close(): void {
    this.closed = true;
    for (const entry of this.watched.values()) entry.stop.abort();
    this.watched.clear();
  }

  private async watch(id: string, entry: Watched, first: TaskSnapshot): Promise<void> {
    const signal = entry.stop.signal;
    let key = watchKey(first);
    let closed = first.closed;
    while (!closed && !signal.aborted) {
      await sleep(this.deps.pollMs ?? 500, signal);
      if (signal.aborted) return;
      let snap: TaskSnapshot;
      try {
        snap = await (await this.deps.client()).status(id);
      } catch {
        continue; // Temporal unreachable for a moment: look again at the next poll
      }
      const next = watchKey(snap);
      if (next === key) continue;
      key = next;
      closed = snap.closed;
      for (const uri of entry.uris) await this.notify(uri).catch(() => {}); // a client gone: its session closes
    }
  }
}

/** Declares subscriptions on `server` and handles them for this session; returns its watchers. */
export function registerSubscriptions(server: McpServer, deps: McpDeps): TaskWatchers {
  const watchers = new TaskWatchers(deps, (uri) => server.server.sendResourceUpdated({ uri }));
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    await watchers.subscribe(request.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    watchers.unsubscribe(request.params.uri);
    return {};
  });
  const before = server.server.onclose;
  server.server.onclose = () => {
    watchers.close();
    before?.();
  };
  return watchers;
}
