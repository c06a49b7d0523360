// The console's pages: two HTML shells (the task list, one task), one stylesheet and one script. No build step: the
// script is plain browser JavaScript that fetches the JSON API, renders with textContent only (nothing from a task is
// ever parsed as HTML), and reloads its data when the server-sent events say something changed.
import { TASK_STATES } from '../src/contract/task';
import { forkPanelHtml, startFormHtml } from './forms';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

export function shell(
  title: string,
  page: string,
  csrf: string,
  body: string,
  data: Record<string, string> = {},
): string {
  const attrs = Object.entries(data)
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${escapeHtml(csrf)}">
<title>${escapeHtml(title)}</title><link rel="stylesheet" href="/assets/console.css"></head>
<body data-page="${page}"${attrs}>
<header><a href="/" class="brand">cua console</a> <a href="/schedules">schedules</a><span id="live" class="live">connecting…</span></header>
<main>${body}</main>
<script src="/assets/console.js"></script><script src="/assets/console-forms.js"></script>
</body></html>`;
}

export function listPageHtml(
  csrf: string,
  endpoints: readonly string[] = [],
  signins: readonly string[] | null = null,
): string {
  const options = ['', ...TASK_STATES]
    .map((s) => `<option value="${s}">${s ? s.replace(/_/g, ' ') : 'any status'}</option>`)
    .join('');
  return shell(
    'Tasks · cua console',
    'list',
    csrf,
    `${startFormHtml(endpoints, signins)}
<form id="filter" class="filter">
  <select name="status" id="filter-status">${options}</select>
  <input name="q" id="filter-text" type="search" placeholder="instruction or id contains…">
  <button type="submit">Filter</button>
</form>
<p id="error" class="error" role="alert"></p>
<section id="waiting-section" hidden><h2>Waiting for a person</h2>
<table id="waiting"><thead><tr><th>task</th><th>question</th><th>waiting</th><th>instruction</th></tr></thead>
<tbody></tbody></table></section>
<section><h2>Tasks</h2>
<table id="tasks"><thead><tr><th>task</th><th>status</th><th>step</th><th>instruction</th><th>age</th><th>environment</th><th>cost</th></tr></thead>
<tbody></tbody></table>
<p id="note" class="note"></p>
<nav class="pager"><button id="prev" type="button">← newer</button><span id="page"></span><button id="next" type="button">older →</button></nav>
</section>`,
  );
}

export function taskPageHtml(csrf: string, id: string): string {
  return shell(
    `${id} · cua console`,
    'task',
    csrf,
    `<h1 id="task-id"></h1>
<p><span id="status" class="status"></span> <span id="step"></span></p>
<p id="instruction" class="instruction"></p>
<p class="links"><a id="temporal-link" target="_blank" rel="noopener" hidden>Temporal UI</a>
<a id="report-link" target="_blank" rel="noopener">HTML report</a></p>
<p id="marks" class="note"></p>
<p id="error" class="error" role="alert"></p>
<section id="question-box" hidden><h2>The agent asks</h2><p id="question"></p>
<form id="reply-form"><input type="hidden" id="question-id" name="questionId">
<input id="reply-text" name="text" autocomplete="off" placeholder="Your reply"><button id="reply-send" type="submit">Reply</button>
<button id="approve" type="button" hidden>Approve</button><button id="deny" type="button" class="danger" hidden>Deny</button></form></section>
<section id="controls" class="controls">
<button id="pause" type="button">Pause</button><button id="resume" type="button">Resume</button>
<form id="say-form"><input id="say-text" name="text" autocomplete="off" placeholder="Tell the agent…"><button id="say-send" type="submit">Say</button></form>
<button id="cancel" type="button" class="danger">Cancel</button>
</section>
${forkPanelHtml()}
<p id="answer" class="answer"></p>
<div id="output-box" hidden><span id="output-label" class="label">Output</span><pre id="output" class="output"></pre></div>
<div class="columns">
<figure id="shot-box" hidden><div class="shot"><img id="shot" alt="latest screenshot"><svg id="marker"></svg></div>
<figcaption id="shot-caption"></figcaption></figure>
<ol id="steps" class="steps"></ol>
</div>
<link rel="stylesheet" href="/assets/live.css"><script src="/assets/live.js"></script>`,
    { id },
  );
}

export const CONSOLE_CSS = `
[hidden]{display:none!important}
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{display:flex;gap:1em;align-items:center;padding:.6em 1em;background:#1d232a;color:#fff}
header a{color:#fff;text-decoration:none;font-weight:600}.live{font-size:12px;opacity:.7}
main{padding:1em;max-width:1400px}table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #e3e6ea;vertical-align:top}
th{font-weight:600;font-size:12px;color:#5b6570}td.num{text-align:right}
.filter{display:flex;gap:.5em;margin-bottom:1em}.filter input{flex:1;max-width:30em}
.error{color:#b00020;min-height:1.2em;margin:.3em 0}.note{color:#5b6570;font-size:12px}
.status{font-weight:600;padding:.1em .5em;border-radius:3px;background:#e3e6ea}
.status.waiting_for_user{background:#ffe08a}.status.complete{background:#c8efc8}.status.failed{background:#f6c0c0}
.status.paused,.status.taken_over{background:#cfe0ff}
#question-box{background:#fff8e0;border:1px solid #f0d27a;padding:.6em 1em;margin:.6em 0}
#reply-form,#say-form{display:inline-flex;gap:.4em}#reply-text{min-width:28em}
.controls{display:flex;gap:.5em;align-items:center;margin:.6em 0}.danger{color:#b00020}
.columns{display:flex;gap:1em;align-items:flex-start}figure{margin:0;flex:0 0 55%}
.shot{position:relative}.shot img{width:100%;display:block;border:1px solid #ccd}
.shot svg{position:absolute;inset:0;width:100%;height:100%;pointer-events:none}
.steps{flex:1;margin:0;padding-left:2.2em;max-height:80vh;overflow:auto}
.steps li{background:#fff;margin-bottom:.4em;padding:.4em .6em;border:1px solid #e3e6ea}
.steps .action{font-weight:600}.steps .url,.steps .obs{color:#5b6570;font-size:12px;word-break:break-all}
.steps .mark{display:inline-block;font-size:11px;background:#eef;border-radius:3px;padding:0 .4em;margin-right:.3em}
.steps .msg{font-size:12px;background:#f3f7ec;padding:.2em .4em;margin-top:.2em}
.answer{font-weight:600}.output{background:#f6f8fa;border:1px solid #e3e6ea;padding:.5em;white-space:pre-wrap;margin:.3em 0 1em}.pager{display:flex;gap:1em;align-items:center;margin-top:.6em}
`;

// Plain browser JavaScript (ES2020), served as /assets/console.js.
export const CONSOLE_JS = String.raw`'use strict';
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  };
  const showError = (message) => ($('#error').textContent = message || '');
  const age = (iso) => {
    if (!iso) return '';
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min';
    if (s < 86400) return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
    return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
  };
  async function getJson(url) {
    const res = await fetch(url, { headers: { accept: 'application/json' } });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body.error || res.status + ' ' + res.statusText);
    return body;
  }
  async function post(url, body) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: JSON.stringify(body || {}),
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || res.status + ' ' + res.statusText);
    return data;
  }
  window.cuaConsole = { getJson, post }; // for the task page's live view (live-page.ts)
  function live(url, onChange) {
    let timer = null;
    const source = new EventSource(url);
    const changed = () => {
      clearTimeout(timer);
      timer = setTimeout(onChange, 100);
    };
    source.addEventListener('open', () => ($('#live').textContent = 'live'));
    source.addEventListener('error', () => ($('#live').textContent = 'reconnecting…'));
    for (const type of ['changed', 'step', 'status', 'end']) source.addEventListener(type, changed);
    source.addEventListener('end', () => {
      source.close(); // an ended task's stream says so once; reconnecting would only say it again
      $('#live').textContent = 'ended';
    });
  }
  const link = (href, text) => {
    const a = el('a', text);
    a.href = href;
    return a;
  };
  Object.assign(window.cuaConsole, { el, link }); // for console-forms.js too

  function listPage() {
    const params = new URLSearchParams(location.search);
    $('#filter-status').value = params.get('status') || '';
    $('#filter-text').value = params.get('q') || '';
    let page = Number(params.get('page') || 0);
    $('#filter').addEventListener('submit', (ev) => {
      ev.preventDefault();
      page = 0;
      load();
    });
    $('#prev').addEventListener('click', () => ((page = Math.max(0, page - 1)), load()));
    $('#next').addEventListener('click', () => ((page += 1), load()));
    async function load() {
      const q = new URLSearchParams();
      if ($('#filter-status').value) q.set('status', $('#filter-status').value);
      if ($('#filter-text').value.trim()) q.set('q', $('#filter-text').value.trim());
      if (page) q.set('page', String(page));
      history.replaceState(null, '', q.toString() ? '?' + q : location.pathname);
      try {
        render(await getJson('/api/tasks?' + q));
        showError('');
      } catch (err) {
        showError(err.message);
      }
    }
    // A table row for a task, its first cell the link to the task's page.
    function taskRow(id) {
      const tr = el('tr');
      tr.dataset.id = id;
      const td = el('td');
      td.append(link('/tasks/' + encodeURIComponent(id), id));
      tr.append(td);
      return tr;
    }
    function render(data) {
      const waiting = $('#waiting tbody');
      waiting.replaceChildren();
      for (const w of data.waiting) {
        const tr = taskRow(w.id);
        tr.append(el('td', w.question ? w.question.text : ''), el('td', age(w.askedAt || w.started)));
        tr.append(el('td', w.instruction));
        waiting.append(tr);
      }
      $('#waiting-section').hidden = data.waiting.length === 0;
      const body = $('#tasks tbody');
      body.replaceChildren();
      for (const r of data.rows) {
        const tr = taskRow(r.id);
        const st = el('td');
        st.append(el('span', r.status.replace(/_/g, ' '), 'status ' + r.status));
        tr.append(st, el('td', r.step === null ? '' : r.step, 'num'), el('td', r.instruction));
        tr.append(el('td', age(r.started)), el('td', r.environment || ''), el('td', r.costShown || '', 'num cost'));
        body.append(tr);
      }
      $('#page').textContent = 'page ' + (data.page + 1);
      $('#prev').disabled = data.page === 0;
      $('#next').disabled = !data.hasNext;
      $('#note').textContent = data.capped
        ? 'The text filter looked through the newest ' + data.scan + ' tasks only.'
        : '';
    }
    load();
    live('/api/events', load);
    setInterval(load, 30000); // ages and waiting times move on without events
  }

  function taskPage() {
    const id = document.body.dataset.id;
    const base = '/api/tasks/' + encodeURIComponent(id);
    $('#task-id').textContent = id;
    $('#report-link').href = '/tasks/' + encodeURIComponent(id) + '/report';
    let shown = '';
    async function load() {
      let d;
      try {
        d = await getJson(base);
      } catch (err) {
        showError(err.message);
        return;
      }
      render(d);
    }
    function render(d) {
      const snap = d.snapshot;
      const status = snap ? snap.status : 'unknown to Temporal';
      const st = $('#status');
      st.textContent = status.replace(/_/g, ' ');
      st.className = 'status ' + status;
      $('#step').textContent = snap ? 'step ' + snap.step + (snap.progress ? ' of ' + snap.progress.maxSteps : '') : '';
      $('#instruction').textContent = d.instruction || '';
      if (d.temporalUrl) {
        $('#temporal-link').href = d.temporalUrl;
        $('#temporal-link').hidden = false;
      }
      const marks = [];
      if (d.environment) marks.push(d.environment);
      if (d.forkOf) marks.push('fork of ' + d.forkOf.runId + ' at step ' + d.forkOf.step);
      if (d.replay) marks.push(d.replay);
      if (d.usage) marks.push(d.usage);
      if (snap && snap.progress && snap.progress.pausing) marks.push('pausing after the step under way');
      if (snap && snap.progress && snap.progress.unreadMessages)
        marks.push(snap.progress.unreadMessages + ' message(s) not read by the model yet');
      if (d.runError) marks.push('run folder: ' + d.runError);
      if (d.sealed) marks.push('this console has no key for its payloads: its steps and screenshots are not shown');
      $('#marks').textContent = marks.join(' · ');
      const q = snap && snap.question;
      $('#question-box').hidden = !q;
      if (q) {
        $('#question').textContent =
          q.kind === 'provider_check'
            ? q.text + ' (The model\'s provider asks you to confirm: reply yes to go ahead; any other reply declines.)'
            : q.text;
        $('#question-id').value = q.id;
        // An approval: the buttons send yes or no, with what is typed as the note.
        const approval = q.kind === 'approval';
        $('#approve').hidden = $('#deny').hidden = !approval;
        $('#reply-send').hidden = approval;
        $('#reply-text').placeholder = approval ? 'A note (optional)' : 'Your reply';
      }
      const open = snap && !snap.closed;
      $('#controls').hidden = !open;
      $('#pause').disabled = !open || status === 'paused';
      $('#resume').disabled = status !== 'paused';
      const end = !snap ? '' : snap.answer ? 'Answer: ' + snap.answer : snap.closed ? snap.error || '' : '';
      $('#answer').textContent = end;
      renderOutput(snap);
      renderSteps(d);
      renderShot(d.latest);
      document.dispatchEvent(new CustomEvent('cua:task', { detail: d })); // the live view (live-page.ts) follows
    }
    // A task with an output schema, once ended: its output's JSON (partial at a budget stop), or why it has none.
    function renderOutput(snap) {
      const has = !!snap && snap.output !== undefined;
      $('#output-box').hidden = !has;
      if (!has) return;
      $('#output-label').textContent = snap.output && snap.output.partial ? 'Output (partial)' : 'Output';
      $('#output').textContent = snap.output
        ? JSON.stringify(snap.output.value, null, 2)
        : 'no output' + (snap.outputError ? ': ' + snap.outputError : '');
    }

    function renderSteps(d) {
      const list = $('#steps');
      list.replaceChildren();
      for (const s of d.steps) {
        const li = el('li');
        li.value = s.number;
        li.dataset.step = s.number;
        for (const m of s.marks) li.append(el('span', m, 'mark'));
        li.append(el('div', s.summary || s.action, 'action'));
        if (s.thoughts) li.append(el('div', s.thoughts, 'thoughts'));
        if (s.invalid) li.append(el('div', 'invalid output: ' + s.invalid, 'obs'));
        if (s.url) li.append(el('div', s.url, 'url'));
        if (s.observation) li.append(el('div', s.observation, 'obs'));
        for (const m of s.messages) li.append(el('div', m.type.replace(/_/g, ' ') + ': ' + m.content, 'msg'));
        for (const [what, label] of [['fork', 'Fork at this step'], ['best', 'Best of N from here']]) {
          const b = el('button', label, 'fork-step');
          Object.assign(b, { type: 'button' });
          Object.assign(b.dataset, { step: s.number, what });
          li.append(b);
        }
        list.append(li);
      }
      for (const m of d.after) {
        const li = el('li', null, 'after');
        li.append(el('div', m.type.replace(/_/g, ' ') + ': ' + m.content, 'msg'));
        list.append(li);
      }
    }
    function renderShot(latest) {
      $('#shot-box').hidden = !latest;
      if (!latest) return;
      const src = base + '/screenshot?file=' + encodeURIComponent(latest.screenshot);
      if (shown !== src) {
        $('#shot').src = src;
        shown = src;
      }
      $('#shot-caption').textContent = 'before step ' + latest.step;
      const svg = $('#marker');
      svg.replaceChildren();
      const m = latest.marker;
      if (!m || !latest.image) return;
      svg.setAttribute('viewBox', '0 0 ' + latest.image.width + ' ' + latest.image.height);
      const ns = 'http://www.w3.org/2000/svg';
      const add = (tag, attrs) => {
        const e = document.createElementNS(ns, tag);
        for (const k in attrs) e.setAttribute(k, attrs[k]);
        svg.append(e);
      };
      const style = { stroke: '#e0245e', 'stroke-width': 4, fill: 'none' };
      if (m.kind === 'point') {
        add('circle', Object.assign({ cx: m.at.x, cy: m.at.y, r: 18 }, style));
        add('circle', { cx: m.at.x, cy: m.at.y, r: 4, fill: '#e0245e' });
      } else {
        const from = m.kind === 'drag' ? m.from || m.to : m.at;
        add('line', Object.assign({ x1: from.x, y1: from.y, x2: m.to.x, y2: m.to.y }, style));
        add('polygon', { points: m.head.map((p) => p.x + ',' + p.y).join(' '), fill: '#e0245e' });
      }
    }
    async function act(what, body) {
      showError('');
      try {
        await post(base + '/' + what, body);
        await load();
        return true;
      } catch (err) {
        showError(err.message);
        return false;
      }
    }
    $('#reply-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const ok = await act('reply', { text: $('#reply-text').value, questionId: $('#question-id').value });
      if (ok) $('#reply-text').value = '';
    });
    const decide = async (word) => {
      const note = $('#reply-text').value.trim();
      const ok = await act('reply', { text: note ? word + ': ' + note : word, questionId: $('#question-id').value });
      if (ok) $('#reply-text').value = '';
    };
    $('#approve').addEventListener('click', () => decide('yes'));
    $('#deny').addEventListener('click', () => decide('no'));
    $('#say-form').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      if (await act('say', { text: $('#say-text').value })) $('#say-text').value = '';
    });
    $('#pause').addEventListener('click', () => act('pause'));
    $('#resume').addEventListener('click', () => act('resume'));
    $('#cancel').addEventListener('click', () => {
      if (confirm('Cancel task ' + id + '? Its browser is closed; its run folder is kept.')) act('cancel');
    });
    load();
    live(base + '/events', load);
  }

  if (document.body.dataset.page === 'list') listPage();
  else if (document.body.dataset.page === 'task') taskPage();
})();
`;
