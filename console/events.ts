// Live updates for the console's pages, sent as server-sent events. The list: one poller for all open list pages,
// which asks Temporal for the newest tasks and the waiting ones and tells each page when anything changed (the page
// then fetches its own filtered page again). A task: the agent client's watch (steps, status changes, the end).
import type { AgentClient } from '../client/client';

/** Tells subscribers when the task list changed (status, step or a new task among the newest 100, or any waiting). */
export class ListEvents {
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private last = '';
  private busy = false;

  constructor(
    private readonly agent: AgentClient,
    private readonly everyMs: number,
  ) {}

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    this.timer ??= setInterval(() => void this.poll(), this.everyMs);
    return () => {
      this.listeners.delete(listener);
      if (!this.listeners.size) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.last = '';
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const [newest, waiting] = await Promise.all([
        this.agent.list({ limit: 100 }),
        this.agent.list({ status: 'waiting_for_user', limit: 100 }),
      ]);
      const print = JSON.stringify([...newest, ...waiting].map((r) => [r.id, r.status, r.step]));
      if (this.last && print !== this.last) for (const l of this.listeners) l();
      this.last = print;
    } catch {
      // Temporal unreachable for a moment: the next poll tries again; the page keeps what it shows.
    } finally {
      this.busy = false;
    }
  }
}

/** Sends a task's watch events (`step`, `status`, `end`; `error` once for a task Temporal does not know). */
export async function taskEvents(
  agent: AgentClient,
  id: string,
  opts: { pollMs: number; signal: AbortSignal },
  send: (type: string, data: unknown) => void,
): Promise<void> {
  try {
    for await (const ev of agent.watch(id, opts)) {
      if (ev.type === 'step') send('step', { step: ev.step.step });
      else if (ev.type === 'status') send('status', { status: ev.status.status, step: ev.status.step });
      else send('end', { status: ev.result?.status ?? null });
    }
  } catch (err) {
    if (!opts.signal.aborted) send('error', { error: (err as Error).message.split('\n')[0] });
  }
}
