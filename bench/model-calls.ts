// Timing of the model HTTP calls, to subtract them from step times. The worker runs in this process and the model
// client uses the global fetch, so a wrapper around fetch sees every call to the scripted model: it times the
// request until the whole response body is in and files the duration under the task's tag, taken from the model
// base URL each task gets (`<model>/t/<tag>`; the scripted server routes any path ending in /chat/completions).

import { SUBCALL_INDEX_HEADER } from '../src/scripted/server';

/** The suffix of the tag its page-question sub-calls are filed under (`durations(tag + SUB_CALLS)`). */
export const SUB_CALLS = ':sub';

export class ModelCallTimer {
  private readonly calls = new Map<string, number[]>();
  private original: typeof fetch | undefined;

  constructor(private readonly modelUrl: string) {}

  /** The model base URL for a task whose calls should be filed under `tag`. */
  baseUrl(tag: string): string {
    return `${this.modelUrl}/t/${tag}`;
  }

  /** Durations (ms) of the tag's model calls, in call order (call k = step k while nothing is retried). */
  durations(tag: string): number[] {
    return [...(this.calls.get(tag) ?? [])];
  }

  install(): void {
    if (this.original) return;
    const original = globalThis.fetch;
    this.original = original;
    const prefix = `${this.modelUrl}/t/`;
    globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (!url.startsWith(prefix)) return original(input, init);
      // A page question's call (read_page's sub-call) is filed apart: step k stays the tag's call k.
      const sub = new Headers(init?.headers).has(SUBCALL_INDEX_HEADER);
      const tag = `${url.slice(prefix.length).split('/')[0] ?? ''}${sub ? SUB_CALLS : ''}`;
      const started = performance.now();
      const response = await original(input, init);
      const body = await response.arrayBuffer();
      const ms = performance.now() - started;
      if (!this.calls.has(tag)) this.calls.set(tag, []);
      this.calls.get(tag)?.push(ms);
      return new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
  }

  uninstall(): void {
    if (this.original) globalThis.fetch = this.original;
    this.original = undefined;
  }
}
