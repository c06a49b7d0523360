// The web console's HTTP server (Fastify): pages, a JSON API, server-sent events, and the access checks of access.ts
// on every request. It talks to Temporal only through the AgentClient and reads run folders only through the run
// store, so it works the same against a local folder, S3, a dev server or a cluster.
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidTaskInputError, TaskError, TaskNotFoundError } from '../client/client';
import type { AgentClient } from '../client/client';
import { TASK_STATES } from '../src/contract/task';
import type { TaskState } from '../src/contract/task';
import type { UrlPolicy } from '../src/contract/url-policy';
import { copyRun } from '../src/trajectory/open-store';
import { RunFolderNotFoundError } from '../src/trajectory/errors';
import { loadEvents } from '../src/trajectory/reader';
import { LocalRunStore } from '../src/trajectory/store';
import type { RunStore } from '../src/trajectory/store';
import { renderTrajectoryReport } from '../src/viewer/report';
import {
  allowedHosts,
  bearerToken,
  cookieValue,
  crossSiteReason,
  CSRF_HEADER,
  SESSION_COOKIE,
  sameSecret,
  sessionCookie,
  Sessions,
} from './access';
import type { Session } from './access';
import { listPage, screenshotsOf, sealedTask, TASK_ID, taskDetail, TEXT_FILTER_SCAN } from './data';
import { ENCRYPTED_PLACEHOLDER } from './sealed-payloads';
import { CONSOLE_CSS, CONSOLE_JS, listPageHtml, taskPageHtml } from './pages';
import { ListEvents, taskEvents } from './events';
import { addLiveView, handbackInput, publicLease, withoutLeaseSecrets } from './takeover';
import { CostColumn } from './cost';
import { bestOfFromForm, forkFromForm } from './fork';
import { FORMS_CSS, FORMS_JS } from './forms';
import { redactSecrets } from './secrets';
import type { KnownSecret } from './secrets';
import { savedSigninNames, startFromForm } from './start';
import { addSchedules } from './schedules';

export const DEFAULT_CONSOLE_PORT = 8300;

export interface ConsoleOptions {
  agent: AgentClient;
  /** The run store the workers write to (opened once, on first use). */
  store: () => RunStore;
  token: string;
  host?: string;
  /** Default 8300; 0 for a free port. */
  port?: number;
  /** Take a free port when `port` is in use (the demo's way) instead of failing. */
  anyPortIfTaken?: boolean;
  /** The Temporal Web UI to link each task to (e.g. http://127.0.0.1:8233), if any. */
  temporalUiUrl?: string | null;
  namespace?: string;
  /** How often the live views ask Temporal for changes (default 1000 ms). */
  pollMs?: number;
  /** The model endpoint names the start form offers (the config's `models`). */
  endpoints?: readonly string[];
  /** The family each endpoint declares (config `models.<name>.family`): a task started on it speaks that family. */
  families?: Readonly<Record<string, string>>;
  /** Secret values to show only as placeholders (console/secrets.ts knownSecrets). */
  secrets?: readonly KnownSecret[];
  /** The workers' URL policy (config `urlPolicy`): a new schedule's start URL must pass it. Default: the default. */
  urlPolicy?: UrlPolicy;
}

export interface ConsoleServer {
  /** http://host:port, without the token. */
  url: string;
  /** The link to open: carries the token once. */
  link: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

type Auth = { kind: 'bearer' } | { kind: 'session'; session: Session };
const authOf = new WeakMap<FastifyRequest, Auth>();

const CSP = "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'";
// The report is one self-contained page with inline script and data: images; sandboxed, it has no origin of its own,
// so its script cannot call the console with the person's cookie.
const REPORT_CSP =
  "sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'";

const ENCRYPTED_REFUSAL = `${ENCRYPTED_PLACEHOLDER}: this console has no key for the task's payloads`;

function refuse(reply: FastifyReply, code: number, message: string): FastifyReply {
  return reply.code(code).header('content-type', 'application/json; charset=utf-8').send({ error: message });
}

/** The one-line message and HTTP status of an error from the agent client. */
function failure(err: unknown): { code: number; message: string } {
  const message = err instanceof Error ? err.message.split('\n')[0]! : String(err);
  if (err instanceof TaskNotFoundError || err instanceof RunFolderNotFoundError) return { code: 404, message };
  if (err instanceof InvalidTaskInputError) return { code: 400, message };
  if (err instanceof TaskError) return { code: 409, message };
  return { code: 500, message };
}

type Options = Omit<ConsoleOptions, 'port' | 'host'> & { host: string; port: () => number };
interface Ctx {
  opts: Options;
  runStore: () => RunStore;
  pollMs: number;
  listEvents: ListEvents;
  costs: CostColumn;
}

export function buildConsole(opts: Options): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  let store: RunStore | undefined;
  const pollMs = opts.pollMs ?? 1000;
  const ctx: Ctx = {
    opts,
    runStore: () => (store ??= opts.store()),
    pollMs,
    listEvents: new ListEvents(opts.agent, pollMs * 2),
    costs: new CostColumn(() => (store ??= opts.store())),
  };
  app.addHook('onClose', async () => ctx.listEvents.stop());
  const sessions = new Sessions();
  addAccess(app, opts, sessions);
  addPages(app, opts, ctx.runStore);
  addTaskApi(app, ctx);
  addControls(app, ctx);
  const signins = () => savedSigninNames(ctx.runStore);
  addSchedules(
    app,
    {
      agent: opts.agent,
      endpoints: opts.endpoints ?? [],
      families: opts.families ?? {},
      signins,
      ...urlPolicyOf(opts),
    },
    html,
    csrfOf,
  );
  addLiveView(app, { ...opts, sessions });
  return app;
}

/** Every request: the Host, the origin of a POST, the token or session, and a session's CSRF token. */
function addAccess(app: FastifyInstance, opts: Options, sessions: Sessions): void {
  app.addHook('onRequest', async (req, reply) => {
    const hosts = allowedHosts(opts.host, opts.port());
    if (hosts && !hosts.has(req.headers.host ?? '')) return refuse(reply, 403, `unknown Host: ${req.headers.host}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const why = crossSiteReason(req.headers);
      if (why) return refuse(reply, 403, `refused: ${why} cannot change anything here`);
    }
    const url = new URL(req.url, 'http://console');
    const given = url.searchParams.get('token');
    if (given !== null && req.method === 'GET') {
      if (!sameSecret(given, opts.token)) return refuse(reply, 401, 'wrong token: open the link `cua console` printed');
      const session = sessions.create();
      url.searchParams.delete('token');
      return reply
        .code(303)
        .header('set-cookie', sessionCookie(session))
        .header('location', url.pathname + url.search)
        .send();
    }
    const bearer = bearerToken(req.headers.authorization);
    if (bearer !== undefined) {
      if (!sameSecret(bearer, opts.token)) return refuse(reply, 401, 'wrong token');
      authOf.set(req, { kind: 'bearer' });
      return;
    }
    const session = sessions.find(cookieValue(req.headers.cookie, SESSION_COOKIE));
    if (!session)
      return refuse(reply, 401, 'not signed in: open the link `cua console` printed (it carries the token)');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const csrf = req.headers[CSRF_HEADER];
      if (typeof csrf !== 'string' || !sameSecret(csrf, session.csrf)) {
        return refuse(reply, 403, 'refused: missing or wrong CSRF token (reload the page)');
      }
    }
    authOf.set(req, { kind: 'session', session });
  });
}

const urlPolicyOf = (opts: Options) => (opts.urlPolicy ? { urlPolicy: opts.urlPolicy } : {});
const csrfOf = (req: FastifyRequest) => {
  const auth = authOf.get(req);
  return auth?.kind === 'session' ? auth.session.csrf : '';
};
const html = (reply: FastifyReply, body: string) =>
  reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', CSP).send(body);
const taskId = (req: FastifyRequest, reply: FastifyReply): string | undefined => {
  const id = (req.params as { id: string }).id;
  if (TASK_ID.test(id)) return id;
  refuse(reply, 400, `not a task id: ${JSON.stringify(id)}`);
  return undefined;
};

function addPages(app: FastifyInstance, opts: Options, runStore: () => RunStore): void {
  app.get('/', async (req, reply) =>
    html(reply, listPageHtml(csrfOf(req), opts.endpoints, await savedSigninNames(runStore))),
  );
  app.get('/tasks/:id', async (req, reply) => {
    const id = taskId(req, reply);
    if (id) return html(reply, taskPageHtml(csrfOf(req), id));
  });
  app.get('/assets/console.js', async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').send(CONSOLE_JS),
  );
  app.get('/assets/console.css', async (_req, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').send(CONSOLE_CSS + FORMS_CSS),
  );
  app.get('/assets/console-forms.js', async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').send(FORMS_JS),
  );
}

function addTaskApi(app: FastifyInstance, ctx: Ctx): void {
  const { opts, runStore, pollMs, listEvents, costs } = ctx;
  const secrets = opts.secrets ?? [];
  app.get('/api/tasks', async (req, reply) => {
    const q = req.query as { status?: string; q?: string; page?: string };
    if (q.status && !(TASK_STATES as readonly string[]).includes(q.status)) {
      return refuse(reply, 400, `status must be one of ${TASK_STATES.join(', ')}`);
    }
    try {
      const page = await listPage(
        opts.agent,
        runStore(),
        {
          ...(q.status ? { status: q.status as TaskState } : {}),
          ...(q.q ? { text: q.q } : {}),
          page: Number(q.page ?? 0) || 0,
        },
        costs,
      );
      return redactSecrets({ ...page, scan: TEXT_FILTER_SCAN }, secrets);
    } catch (err) {
      const f = failure(err);
      return refuse(reply, f.code, f.message);
    }
  });

  app.get('/api/tasks/:id', async (req, reply) => {
    const id = taskId(req, reply);
    if (!id) return;
    try {
      const detail = await taskDetail(opts.agent, runStore(), id);
      const ns = encodeURIComponent(opts.namespace ?? 'default');
      const temporalUrl = opts.temporalUiUrl
        ? `${opts.temporalUiUrl.replace(/\/$/, '')}/namespaces/${ns}/workflows/${encodeURIComponent(id)}`
        : null;
      return redactSecrets({ ...withoutLeaseSecrets(detail), temporalUrl }, secrets);
    } catch (err) {
      const f = failure(err);
      return refuse(reply, f.code, f.message);
    }
  });

  // Only a file the run's own events name is served, read through the store under the task's id: a name the client
  // makes up, or one that climbs out of the folder, is refused.
  app.get('/api/tasks/:id/screenshot', async (req, reply) => {
    const id = taskId(req, reply);
    if (!id) return;
    const file = (req.query as { file?: string }).file ?? '';
    const normal = path.posix.normalize(file);
    if (!file || normal.startsWith('..') || path.posix.isAbsolute(normal) || normal !== file) {
      return refuse(reply, 400, 'not a screenshot of this run');
    }
    try {
      if (await sealedTask(opts.agent, id)) return refuse(reply, 403, ENCRYPTED_REFUSAL);
      if (!screenshotsOf(await loadEvents(runStore(), id)).has(file)) {
        return refuse(reply, 404, 'not a screenshot of this run');
      }
      const bytes = await runStore().readBytes(`${id}/${file}`);
      if (!bytes) return refuse(reply, 404, 'screenshot missing from the run folder');
      return reply
        .header('content-type', file.endsWith('.png') ? 'image/png' : 'application/octet-stream')
        .header('cache-control', 'private, max-age=3600')
        .send(bytes);
    } catch (err) {
      const f = failure(err);
      return refuse(reply, f.code, f.message);
    }
  });

  // The HTML report `cua view` writes, generated on demand from a copy of the run (so an S3 run works too).
  app.get('/tasks/:id/report', async (req, reply) => {
    const id = taskId(req, reply);
    if (!id) return;
    if (await sealedTask(opts.agent, id)) return refuse(reply, 403, ENCRYPTED_REFUSAL);
    const temp = await fs.mkdtemp(path.join(os.tmpdir(), 'cua-console-'));
    try {
      await copyRun(runStore(), id, new LocalRunStore(temp));
      const { html: page } = await renderTrajectoryReport(path.join(temp, id));
      return reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', REPORT_CSP)
        .send(page);
    } catch (err) {
      const f = failure(err);
      return refuse(reply, f.code, f.message);
    } finally {
      await fs.rm(temp, { recursive: true, force: true });
    }
  });

  app.get('/api/events', async (req, reply) => {
    const raw = sse(reply);
    const off = listEvents.subscribe(() => raw.write('event: changed\ndata: {}\n\n'));
    req.raw.on('close', off);
  });

  app.get('/api/tasks/:id/events', async (req, reply) => {
    const id = taskId(req, reply);
    if (!id) return;
    const raw = sse(reply);
    const abort = new AbortController();
    req.raw.on('close', () => abort.abort());
    void taskEvents(opts.agent, id, { pollMs, signal: abort.signal }, (type, data) =>
      raw.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`),
    ).finally(() => raw.end());
  });
}

/** The controls and the start form: each a POST whose refusal is the agent client's one-line error. */
function addControls(app: FastifyInstance, ctx: Ctx): void {
  const { opts } = ctx;
  type Body = Record<string, unknown>;
  const post = (url: string, run: (body: Body, req: FastifyRequest, reply: FastifyReply) => Promise<object> | null) =>
    app.post(url, async (req, reply) => {
      const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Body;
      try {
        const done = run(body, req, reply);
        if (!done) return; // refused already
        return { ok: true, ...(await done) };
      } catch (err) {
        const f = failure(err);
        return refuse(reply, f.code, f.message);
      }
    });
  const control = (name: string, run: (id: string, body: Body) => Promise<object>) =>
    post(`/api/tasks/:id/${name}`, (body, req, reply) => {
      const id = taskId(req, reply);
      return id ? run(id, body) : null;
    });
  const text = (body: Body) => (typeof body['text'] === 'string' ? body['text'] : '');
  control('reply', (id, body) => {
    const questionId = typeof body['questionId'] === 'string' && body['questionId'] ? body['questionId'] : undefined;
    return opts.agent.reply(id, text(body), questionId ? { questionId } : {});
  });
  control('pause', (id) => opts.agent.pause(id));
  control('resume', (id) => opts.agent.resume(id));
  control('say', (id, body) => opts.agent.say(id, text(body)));
  control('cancel', (id) => opts.agent.cancel(id));
  control('takeover', async (id) => ({ lease: publicLease(await opts.agent.takeover(id)) }));
  control('handback', (id, body) => opts.agent.handback(id, handbackInput(body)));
  control('fork', (id, body) => forkFromForm(opts.agent, ctx.runStore, id, body));
  control('best-of', (id, body) => bestOfFromForm(opts.agent, ctx.runStore, id, body));
  post('/api/tasks', (body) =>
    startFromForm(opts.agent, opts.endpoints ?? [], body, opts.families, () => savedSigninNames(ctx.runStore)),
  );
}

/** Takes the reply over for server-sent events; a comment every 15 s keeps proxies from closing it. */
function sse(reply: FastifyReply) {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  });
  raw.write(': connected\n\n');
  const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), 15_000);
  raw.on('close', () => clearInterval(keepAlive));
  return raw;
}

/** Starts the console and returns its address and link (the link carries the token). */
export async function startConsole(opts: ConsoleOptions): Promise<ConsoleServer> {
  const host = opts.host ?? '127.0.0.1';
  let port = opts.port ?? DEFAULT_CONSOLE_PORT;
  if (opts.anyPortIfTaken && port !== 0 && !(await portFree(host, port))) port = 0;
  const app = buildConsole({ ...opts, host, port: () => port });
  try {
    await app.listen({ host, port });
  } catch (err) {
    await app.close();
    throw err;
  }
  const address = app.server.address();
  port = typeof address === 'object' && address ? address.port : port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    link: `${url}/?token=${encodeURIComponent(opts.token)}`,
    host,
    port,
    close: async () => {
      await app.close();
    },
  };
}

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ host, port }, () => probe.close(() => resolve(true)));
  });
}
