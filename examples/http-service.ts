// An HTTP service that runs an agent task per request and lets a person reply to its question later:
//
//   POST   /tasks                 {"instruction": "...", "url": "https://..."}  → 201 {"id": "..."}
//   GET    /tasks/:id             where it is: status, step, the pending question, the answer once done
//   GET    /tasks/:id/question    the pending question (404 when there is none)
//   POST   /tasks/:id/reply       {"text": "...", "questionId": "q1"}           → 200 {"step": n}
//   GET    /tasks/:id/events      Server-Sent Events: each step and status change as it happens, then the result
//   DELETE /tasks/:id             cancel
//
// Typed client errors become HTTP statuses (404 unknown task, 409 not waiting or stale question, 400 bad input).
// Run it next to a worker (`npx cua worker`, or examples/embedded-worker.ts):
//   TEMPORAL_ADDRESS=127.0.0.1:7233 PORT=3000 npx tsx examples/http-service.ts
import http from 'node:http';
import {
  createAgentClient,
  InvalidTaskInputError,
  StaleQuestionError,
  TaskAlreadyExistsError,
  TaskClosedError,
  TaskNotFoundError,
  TaskNotWaitingError,
} from 'durable-cua/client';
import type { AgentClient } from 'durable-cua/client';

/** The HTTP status for a refusal the client reports with a typed error; other errors are the server's fault. */
function statusFor(err: unknown): number {
  if (err instanceof TaskNotFoundError) return 404;
  if (err instanceof InvalidTaskInputError) return 400;
  if (
    err instanceof TaskNotWaitingError ||
    err instanceof StaleQuestionError ||
    err instanceof TaskClosedError ||
    err instanceof TaskAlreadyExistsError
  ) {
    return 409;
  }
  return 500;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 100_000) throw new InvalidTaskInputError('body', 'larger than 100 kB');
  }
  try {
    const value: unknown = JSON.parse(text || '{}');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new InvalidTaskInputError('body', 'not a JSON object');
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Streams the task's watch() as Server-Sent Events until it ends or the caller goes away. */
async function streamEvents(agent: AgentClient, id: string, req: http.IncomingMessage, res: http.ServerResponse) {
  const stop = new AbortController();
  req.on('close', () => stop.abort());
  const events = agent.watch(id, { pollMs: 500, signal: stop.signal });
  const first = await events.next(); // an unknown id throws here, before the stream's headers go out
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (let e = first; !e.done; e = await events.next()) {
    res.write(`event: ${e.value.type}\ndata: ${JSON.stringify(e.value)}\n\n`);
  }
  res.end();
}

async function route(agent: AgentClient, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const [, collection, id, sub] = url.pathname.split('/');
  if (collection !== 'tasks') return send(res, 404, { error: 'not found' });

  if (req.method === 'POST' && !id) {
    const body = await readJson(req);
    const instruction = str(body.instruction) ?? '';
    const startUrl = str(body.url);
    const { id: taskId } = await agent.start({ instruction, ...(startUrl ? { startUrl } : {}) });
    return send(res, 201, { id: taskId });
  }
  if (!id) return send(res, 200, await agent.list({ limit: 20 }));
  if (req.method === 'GET' && !sub) return send(res, 200, await agent.status(id));
  if (req.method === 'GET' && sub === 'question') {
    const { question } = await agent.status(id);
    return question ? send(res, 200, question) : send(res, 404, { error: `task ${id} has no pending question` });
  }
  if (req.method === 'POST' && sub === 'reply') {
    const body = await readJson(req);
    const questionId = str(body.questionId);
    return send(res, 200, await agent.reply(id, str(body.text) ?? '', questionId ? { questionId } : {}));
  }
  if (req.method === 'GET' && sub === 'events') return streamEvents(agent, id, req, res);
  if (req.method === 'DELETE' && !sub) return send(res, 200, await agent.cancel(id));
  return send(res, 405, { error: `${req.method} ${url.pathname} is not supported` });
}

export async function main(): Promise<void> {
  // The same settings a `cua` client reads: TEMPORAL_ADDRESS, CUA_TASK_QUEUE, CUA_ENCRYPTION_KEY(S), …
  const agent = await createAgentClient({ env: process.env });
  const server = http.createServer((req, res) => {
    route(agent, req, res).catch((err: unknown) => {
      const status = statusFor(err);
      if (status === 500) console.error(err);
      if (res.headersSent) return res.end();
      send(res, status, { error: err instanceof Error ? err.message : String(err) });
    });
  });
  const port = Number(process.env.PORT ?? 3000);
  server.listen(port, '127.0.0.1', () => console.log(`agent service on http://127.0.0.1:${port}/tasks`));
  process.once('SIGINT', () => {
    server.close();
    void agent.close();
  });
}

if (require.main === module) void main();
