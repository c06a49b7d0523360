// The console's schedules page (/schedules, and /schedules/NAME with that schedule described): each schedule's
// timing, state and next run; its last runs with their state and output, and its monitor's notifications; pause,
// unpause, trigger and delete; and the "New schedule" form (schedule-form.ts), as `cua schedule create`. A JSON API
// over the agent client, and a plain script that renders with textContent only.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidScheduleError, ScheduleNotFoundError, TaskError } from '../client/client';
import type { AgentClient } from '../client/client';
import { SCHEDULE_NAME } from '../src/contract/task';
import { shell } from './pages';
import { createFromForm, scheduleFormHtml } from './schedule-form';
import type { ScheduleFormContext } from './schedule-form';

const ACTIONS = ['pause', 'unpause', 'trigger', 'delete'] as const;

function refused(reply: FastifyReply, err: unknown): FastifyReply {
  const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
  const code =
    err instanceof ScheduleNotFoundError
      ? 404
      : err instanceof InvalidScheduleError
        ? 400
        : err instanceof TaskError
          ? 409
          : 500;
  return reply.code(code).header('content-type', 'application/json; charset=utf-8').send({ error: message });
}

/** What the page needs: the agent client, and what the form's checks need (schedule-form.ts). */
export interface SchedulesDeps extends Required<Omit<ScheduleFormContext, 'urlPolicy'>> {
  agent: AgentClient;
  urlPolicy?: ScheduleFormContext['urlPolicy'];
}

function pageBody(endpoints: readonly string[], signins: readonly string[] | null): string {
  return `<p id="error" class="error" role="alert"></p>
${scheduleFormHtml(endpoints, signins)}
<section><h2>Schedules</h2>
<table id="schedules"><thead><tr><th>schedule</th><th>state</th><th>when</th><th>next run</th><th>task</th><th></th></tr></thead>
<tbody></tbody></table><p class="note">Or from a shell: <code>npx cua schedule create NAME --every 6h -- "…" --url …</code></p></section>
<section id="detail" hidden><h2 id="detail-name"></h2><p id="detail-summary"></p>
<h3>Last runs</h3><table id="runs"><thead><tr><th>task</th><th>state</th><th>output or answer</th></tr></thead><tbody></tbody></table>
<h3>Notifications</h3><table id="notifications"><thead><tr><th>when</th><th>task</th><th>old</th><th>new</th></tr></thead><tbody></tbody></table>
</section>
<script src="/assets/console-schedules.js" defer></script>`;
}

/** The page, its script and its JSON API. `html` sends a page with the console's headers; `csrf` is the session's. */
export function addSchedules(
  app: FastifyInstance,
  deps: SchedulesDeps,
  html: (reply: FastifyReply, body: string) => FastifyReply,
  csrfOf: (req: FastifyRequest) => string,
): void {
  const { agent } = deps;
  const page = async (req: FastifyRequest, reply: FastifyReply, name?: string) =>
    html(
      reply,
      shell(
        name ? `${name} · schedules · cua console` : 'Schedules · cua console',
        'schedules',
        csrfOf(req),
        pageBody(deps.endpoints, await deps.signins()),
        name ? { schedule: name } : {},
      ),
    );
  app.get('/schedules', async (req, reply) => page(req, reply));
  app.get('/schedules/:name', async (req, reply) => {
    const { name } = req.params as { name: string };
    if (!SCHEDULE_NAME.test(name)) return refused(reply, new InvalidScheduleError('name', 'not a schedule name'));
    return page(req, reply, name);
  });
  app.get('/assets/console-schedules.js', async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').send(SCHEDULES_JS),
  );
  app.get('/api/schedules', async (_req, reply) => {
    try {
      return { schedules: await agent.listSchedules() };
    } catch (err) {
      return refused(reply, err);
    }
  });
  app.get('/api/schedules/:name', async (req, reply) => {
    const { name } = req.params as { name: string };
    if (!SCHEDULE_NAME.test(name)) return refused(reply, new InvalidScheduleError('name', 'not a schedule name'));
    try {
      return await agent.describeSchedule(name);
    } catch (err) {
      return refused(reply, err);
    }
  });
  app.post('/api/schedules', async (req, reply) => {
    const body = typeof req.body === 'object' && req.body !== null ? req.body : {};
    try {
      return { ok: true, ...(await createFromForm(agent, body, deps)) };
    } catch (err) {
      return refused(reply, err);
    }
  });
  app.post('/api/schedules/:name/:action', async (req, reply) => {
    const { name, action } = req.params as { name: string; action: string };
    if (!SCHEDULE_NAME.test(name)) return refused(reply, new InvalidScheduleError('name', 'not a schedule name'));
    if (!(ACTIONS as readonly string[]).includes(action)) return reply.code(404).send({ error: 'no such action' });
    try {
      if (action === 'pause') await agent.pauseSchedule(name, 'paused in the console');
      else if (action === 'unpause') await agent.unpauseSchedule(name, 'unpaused in the console');
      else if (action === 'trigger') await agent.triggerSchedule(name);
      else await agent.deleteSchedule(name);
      return { ok: true };
    } catch (err) {
      return refused(reply, err);
    }
  });
}

// Plain browser JavaScript (ES2020), served as /assets/console-schedules.js.
const SCHEDULES_JS = String.raw`'use strict';
(function () {
  const { getJson, post } = window.cuaConsole;
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, text) => {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
  const error = (m) => ($('#error').textContent = m || '');
  const when = (s) => (s.cron ? 'cron ' + s.cron + ' (' + (s.timezone || 'UTC') + ')' : 'every ' + s.every);
  function row(cells) {
    const tr = el('tr');
    for (const c of cells) {
      const td = el('td');
      if (c instanceof Node) td.append(c);
      else td.textContent = c === null || c === undefined ? '' : String(c);
      tr.append(td);
    }
    return tr;
  }
  function button(label, run) {
    const b = el('button', label);
    b.type = 'button';
    b.addEventListener('click', () => run().catch((e) => error(e.message)));
    return b;
  }
  const pageOf = (name) => '/schedules/' + encodeURIComponent(name);
  async function describe(name) {
    const d = await getJson('/api/schedules/' + encodeURIComponent(name));
    if (location.pathname !== pageOf(name)) history.replaceState(null, '', pageOf(name));
    $('#detail').hidden = false;
    $('#detail-name').textContent = d.name;
    $('#detail-summary').textContent =
      when(d) + ' · overlap ' + d.overlap + ' · ' + (d.paused ? 'paused' : 'active') +
      (d.notifyWhen !== null ? ' · notify when ' + show(d.notifyWhen) : '') + ' · next: ' + (d.nextRuns.join(', ') || '—');
    const runs = $('#runs tbody');
    runs.replaceChildren();
    for (const r of d.runs) {
      const link = el('a', r.id);
      link.href = '/tasks/' + encodeURIComponent(r.id);
      const what = r.output ? show(r.output.value) + (r.output.partial ? ' (partial)' : '') : r.error || r.answer;
      runs.append(row([link, r.status + (r.endReason && r.endReason !== r.status ? ' (' + r.endReason + ')' : ''), what]));
    }
    const notes = $('#notifications tbody');
    notes.replaceChildren();
    for (const n of (d.monitor && d.monitor.notifications) || []) notes.append(row([n.at, n.taskId, show(n.old), show(n.new)]));
  }
  async function load() {
    error('');
    const { schedules } = await getJson('/api/schedules');
    const body = $('#schedules tbody');
    body.replaceChildren();
    for (const s of schedules) {
      const act = (a) => async () => {
        if (a === 'delete' && !confirm('Delete schedule ' + s.name + '? Runs under way go on.')) return;
        await post('/api/schedules/' + encodeURIComponent(s.name) + '/' + a, {});
        await load();
      };
      const buttons = el('span');
      buttons.append(
        button('describe', () => describe(s.name)),
        button(s.paused ? 'unpause' : 'pause', act(s.paused ? 'unpause' : 'pause')),
        button('trigger', act('trigger')),
        button('delete', act('delete')),
      );
      const link = el('a', s.name);
      link.href = pageOf(s.name);
      body.append(row([link, s.paused ? 'paused' : 'active', when(s), s.nextRun || '—', s.instruction, buttons]));
    }
  }
  // The new schedule's form (console-forms.js posts it): a refusal is its one line, and every field keeps its text.
  function scheduleForm() {
    const form = $('#schedule-form');
    if (!form) return;
    const value = (sel) => ($(sel) ? $(sel).value : '');
    const fields = () => ({
      name: value('#sched-name'),
      instruction: value('#sched-instruction'),
      startUrl: value('#sched-url'),
      endpoint: value('#sched-endpoint'),
      maxSteps: value('#sched-steps'),
      signin: value('#sched-signin'),
      outputSchema: value('#sched-output-schema'),
      cron: value('#sched-cron'),
      timezone: value('#sched-timezone'),
      every: value('#sched-every'),
      overlap: value('#sched-overlap'),
      notifyWhen: value('#sched-notify'),
    });
    window.cuaConsole.onSubmit('sched', form, '/api/schedules', fields, ({ name }) => location.assign(pageOf(name)));
  }
  scheduleForm();
  const chosen = document.body.dataset.schedule;
  load()
    .then(() => chosen && describe(chosen))
    .catch((e) => error(e.message));
})();
`;
