// The task page's live view (issue 29), served as /assets/live.js and /assets/live.css beside the page's own script:
// the Take over and Hand back controls, and while the task is taken over its browser on a canvas (the worker's
// screencast, relayed by the console's /api/tasks/<id>/live socket) with the person's mouse, wheel and keys sent back,
// or for a desktop the link to its noVNC view. It follows the task as the page's script renders it (the `cua:task`
// event), so a reloaded page picks the takeover up from the workflow's state. Plain browser JavaScript, textContent
// only.
import { TAKEOVER_CANVAS_JS } from '../src/browser/takeover/viewer-page';

export const LIVE_CSS = `
#live-box{margin:.6em 0}.live-bar{display:flex;gap:.5em;align-items:center}
#handback-form{display:inline-flex;gap:.4em}#handback-note{min-width:24em}
#live-screen{margin:.6em 0;max-width:1100px}
#live-canvas{display:block;width:100%;height:auto;border:2px solid #3b6fd8;background:#fff;outline:none;cursor:crosshair}
#live-canvas:focus{border-color:#e0245e}#live-caption{color:#5b6570;font-size:12px;word-break:break-all}
`;

export const LIVE_JS = String.raw`'use strict';
(function () {
  ${TAKEOVER_CANVAS_JS}
  const id = document.body.dataset.id;
  const base = '/api/tasks/' + encodeURIComponent(id);
  const make = (tag, attrs, children) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === 'text') e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (const c of children || []) e.append(c);
    return e;
  };
  const take = make('button', { id: 'takeover', type: 'button', text: 'Take over', hidden: '' });
  const note = make('input', { id: 'handback-note', autocomplete: 'off', placeholder: 'Note for the agent (optional)' });
  const give = make('button', { id: 'handback-send', type: 'submit', text: 'Hand back' });
  const form = make('form', { id: 'handback-form', hidden: '' }, [note, give]);
  const state = make('span', { id: 'live-state', class: 'note' });
  const canvas = make('canvas', { id: 'live-canvas', tabindex: '0', width: '1280', height: '720' });
  const caption = make('figcaption', { id: 'live-caption' });
  const screen = make('figure', { id: 'live-screen', hidden: '' }, [canvas, caption]);
  const desktop = make('a', { id: 'desktop-link', target: '_blank', rel: 'noopener noreferrer', text: 'Open its screen (noVNC)' });
  const desktopBox = make('p', { id: 'desktop-view', hidden: '' }, ['A person has this desktop. ', desktop]);
  const box = make('section', { id: 'live-box' }, [make('div', { class: 'live-bar' }, [take, form, state]), screen, desktopBox]);
  const columns = document.querySelector('.columns');
  columns.parentNode.insertBefore(box, columns);

  const showError = (message) => (document.getElementById('error').textContent = message || '');
  // The page's own script (console.js, which runs after this one) lends its fetch helpers.
  const post = (what, body) => window.cuaConsole.post(base + '/' + what, body);

  let ws = null;
  let shown = null; // the lease whose browser the canvas shows
  let desktopLease = null;
  let asking = false;
  const send = (event) => ws && ws.readyState === 1 && ws.send(JSON.stringify(event));
  forwardTakeoverInput(canvas, send);

  function connect(leaseId) {
    const socket = new WebSocket(location.origin.replace(/^http/, 'ws') + base + '/live');
    ws = socket;
    socket.onopen = () => (state.textContent = 'You have the browser: click, scroll and type in it.');
    socket.onmessage = (message) => {
      const m = JSON.parse(message.data);
      if (m.type === 'frame') {
        void drawTakeoverFrame(canvas, m).then(() => (canvas.dataset.frames = String(Number(canvas.dataset.frames || 0) + 1)));
        caption.textContent = (m.title ? m.title + ' · ' : '') + m.url;
      } else if (m.type === 'blocked') state.textContent = 'blocked by policy: ' + m.url + ': ' + m.reason;
      else if (m.type === 'error') state.textContent = m.message;
      else if (m.type === 'ended') stop('Handed back: the agent has the browser again.');
    };
    socket.onclose = () => {
      if (ws !== socket || shown !== leaseId) return;
      ws = null;
      state.textContent = 'Live view disconnected; connecting again…';
      setTimeout(() => shown === leaseId && !ws && connect(leaseId), 1000);
    };
  }
  function stop(message) {
    shown = null;
    const socket = ws;
    ws = null;
    if (socket) socket.close();
    screen.hidden = true;
    if (message !== undefined) state.textContent = message;
  }
  async function showDesktop(lease) {
    if (desktopLease === lease.leaseId) return;
    desktopLease = lease.leaseId;
    try {
      desktop.href = (await window.cuaConsole.getJson(base + '/desktop')).url;
      desktopBox.hidden = false;
    } catch (err) {
      desktopLease = null;
    }
  }

  function update(d) {
    const snap = d.snapshot;
    const open = !!snap && !snap.closed;
    const t = (snap && snap.progress && snap.progress.takeover) || null;
    const lease = t && t.leaseId ? t : null;
    take.hidden = !open || !!lease;
    take.disabled = asking || !!(t && t.pending);
    form.hidden = !open || !lease;
    if (lease) form.dataset.lease = lease.leaseId;
    if (t) document.getElementById('pause').disabled = true; // refused while a person has the browser
    if (!lease || lease.kind !== 'desktop') {
      desktopBox.hidden = true;
      desktopLease = null;
    }
    if (!open || !lease || lease.kind !== 'browser') {
      if (shown) stop('');
      if (t && t.pending) state.textContent = 'Taking over after the step under way…';
      if (lease && lease.kind === 'desktop') {
        state.textContent = 'Taken over since ' + new Date(lease.since).toLocaleTimeString() + '.';
        void showDesktop(lease);
      }
      return;
    }
    if (shown === lease.leaseId) return;
    stop();
    shown = lease.leaseId;
    screen.hidden = false;
    connect(lease.leaseId);
  }
  const refresh = () => window.cuaConsole.getJson(base).then(update, () => undefined);
  document.addEventListener('cua:task', (ev) => update(ev.detail));

  take.addEventListener('click', async () => {
    showError('');
    asking = true;
    take.disabled = true;
    state.textContent = 'Taking over after the step under way…';
    try {
      await post('takeover');
    } catch (err) {
      showError(err.message);
      state.textContent = '';
    } finally {
      asking = false;
    }
    await refresh();
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    showError('');
    give.disabled = true;
    try {
      await post('handback', { note: note.value, leaseId: form.dataset.lease || '' });
      note.value = '';
      stop('Handed back: the agent has the browser again.');
    } catch (err) {
      showError(err.message);
    } finally {
      give.disabled = false;
    }
    await refresh();
  });
})();
`;
