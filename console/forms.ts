// The console's forms beside its pages (pages.ts): "Start a task" on the list page, "Fork at this step" and "Best of N
// from here" on a task page. HTML pieces for the shells, and one plain browser script (/assets/console-forms.js) that
// posts them with the page's CSRF token (console.js's `post`) and shows a refusal's one line in the form.

import { escapeHtml } from '../src/viewer/markup';

/**
 * The list page's start form; `endpoints`: the config's model endpoint names (the select's choices); `signins`: the
 * saved sign-ins' names (null: the run store cannot be read here, and the form offers no sign-in).
 */
export function startFormHtml(endpoints: readonly string[], signins: readonly string[] | null = null): string {
  const options = endpointOptionsHtml(endpoints);
  return `<details id="start-box" class="start"><summary>Start a task</summary>
<form id="start-form" class="start-form" novalidate>
<textarea id="start-instruction" name="instruction" rows="2" placeholder="What should the agent do?"></textarea>
<div class="start-row">
<label>start URL <input id="start-url" name="startUrl" autocomplete="off" placeholder="https://…"></label>
<label>model <select id="start-endpoint" name="endpoint">${options}</select></label>
<label>environment <select id="start-environment" name="environment"><option value="browser">browser</option><option value="desktop">desktop</option></select></label>
<label>max steps <input id="start-steps" name="maxSteps" inputmode="numeric" size="5" placeholder="30"></label>
${signinFieldsHtml(signins)}<button id="start-send" type="submit">Start</button>
</div>
<textarea id="start-output-schema" name="outputSchema" rows="2" spellcheck="false" placeholder="Output schema (optional): a JSON Schema the task's output must match, e.g. {&quot;type&quot;:&quot;object&quot;,&quot;properties&quot;:{&quot;price&quot;:{&quot;type&quot;:&quot;number&quot;}}}"></textarea>
</form>
<p id="start-error" class="error" role="alert"></p></details>`;
}

/** A select's options for the config's model endpoint names (none: the workers' own `default`). */
export function endpointOptionsHtml(endpoints: readonly string[]): string {
  const names = endpoints.length ? endpoints : ['default'];
  return names.map((n) => `<option value="${escapeHtml(n)}">${escapeHtml(n)}</option>`).join('');
}

/**
 * A form's saved sign-in select (`id`), and with `refresh` the start form's refresh box; none saved: a disabled
 * select that says how to save one; null (the store cannot be read here): nothing.
 */
export function signinFieldsHtml(signins: readonly string[] | null, id = 'start-signin', refresh = true): string {
  if (signins === null) return '';
  if (signins.length === 0) {
    return (
      `<label>sign-in <select id="${id}" name="signin" disabled>` +
      '<option value="">none saved (npx cua signin save &lt;task-id&gt; NAME)</option></select></label>\n'
    );
  }
  const options = signins.map((n) => `<option value="${escapeHtml(n)}">${escapeHtml(n)}</option>`).join('');
  return (
    `<label>sign-in <select id="${id}" name="signin"><option value="">none</option>${options}</select></label>\n` +
    (refresh
      ? `<label><input id="${id}-refresh" name="signinRefresh" type="checkbox"> ` +
        'refresh the sign-in when the task ends</label>\n'
      : '')
  );
}

/** The task page's fork panel, opened by a step's "Fork at this step" or "Best of N from here". */
export function forkPanelHtml(): string {
  return `<section id="fork-box" class="fork-box" hidden><h2>From step <span id="fork-step-label"></span></h2>
<form id="fork-form"><input id="fork-hint" name="hint" autocomplete="off" placeholder="A hint for the model (optional)">
<button id="fork-send" type="submit">Fork at this step</button></form>
<form id="best-form"><label>best of <input id="best-n" name="branches" inputmode="numeric" size="3" value="3"></label>
<textarea id="best-hints" name="hints" rows="2" placeholder="Hints, one per line, taken in turn (optional)"></textarea>
<label>judge <select id="best-judge" name="judge"><option value="webjudge">webjudge</option><option value="rubric">rubric</option></select></label>
<button id="best-send" type="submit">Best of N from here</button></form>
<p id="fork-error" class="error" role="alert"></p><p id="fork-result"></p>
<button id="fork-close" type="button">Close</button></section>`;
}

export const FORMS_CSS = `
.start{background:#fff;border:1px solid #e3e6ea;padding:.5em .8em;margin-bottom:1em}.start summary{font-weight:600;cursor:pointer}
.start-form textarea{width:100%;box-sizing:border-box;margin:.5em 0}.start-row{display:flex;gap:.8em;flex-wrap:wrap;align-items:center}
.steps .fork-step{font-size:11px;margin:.3em .3em 0 0}
.fork-box{background:#eef3ff;border:1px solid #b8c9f0;padding:.6em 1em;margin:.6em 0}
.fork-box form{display:flex;gap:.5em;align-items:center;margin:.3em 0}#fork-hint{min-width:28em}
`;

// Plain browser JavaScript (ES2020), served as /assets/console-forms.js after console.js.
export const FORMS_JS = String.raw`'use strict';
(function () {
  const { post, el, link } = window.cuaConsole;
  const $ = (sel) => document.querySelector(sel);

  // Posts a form's fields on submit: its '#<prefix>-send' button waits, and a refusal is its '#<prefix>-error' line
  // (the fields keep what was typed). The schedules page's form uses it too.
  function onSubmit(prefix, form, url, fields, done) {
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      $('#' + prefix + '-error').textContent = '';
      $('#' + prefix + '-send').disabled = true;
      try {
        done(await post(url, fields()));
      } catch (err) {
        $('#' + prefix + '-error').textContent = err.message;
      } finally {
        $('#' + prefix + '-send').disabled = false;
      }
    });
  }
  window.cuaConsole.onSubmit = onSubmit;

  function startForm() {
    const form = $('#start-form');
    if (!form) return;
    const fields = () => ({
      instruction: $('#start-instruction').value,
      startUrl: $('#start-url').value,
      endpoint: $('#start-endpoint').value,
      environment: $('#start-environment').value,
      maxSteps: $('#start-steps').value,
      outputSchema: $('#start-output-schema').value,
      signin: $('#start-signin') ? $('#start-signin').value : '',
      signinRefresh: $('#start-signin-refresh') ? $('#start-signin-refresh').checked : false,
    });
    onSubmit('start', form, '/api/tasks', fields, ({ id }) => location.assign('/tasks/' + encodeURIComponent(id)));
  }

  function forkPanel() {
    const box = $('#fork-box');
    if (!box) return;
    const base = '/api/tasks/' + encodeURIComponent(document.body.dataset.id);
    let step = 0;
    $('#steps').addEventListener('click', (ev) => {
      const button = ev.target.closest('button.fork-step');
      if (!button) return;
      step = Number(button.dataset.step);
      $('#fork-step-label').textContent = String(step);
      $('#fork-error').textContent = '';
      $('#fork-result').replaceChildren();
      box.hidden = false;
      (button.dataset.what === 'best' ? $('#best-n') : $('#fork-hint')).focus();
    });
    $('#fork-close').addEventListener('click', () => (box.hidden = true));
    async function send(what, body, done) {
      $('#fork-error').textContent = '';
      try {
        done(await post(base + '/' + what, Object.assign({ step }, body)));
      } catch (err) {
        $('#fork-error').textContent = err.message;
      }
    }
    const taskLink = (id) => link('/tasks/' + encodeURIComponent(id), id);
    $('#fork-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      send('fork', { hint: $('#fork-hint').value }, (r) => {
        $('#fork-result').replaceChildren(el('span', 'Started the fork '), taskLink(r.id), el('span', ' at step ' + step + '.'));
      });
    });
    $('#best-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const body = { branches: $('#best-n').value, hints: $('#best-hints').value, judge: $('#best-judge').value };
      send('best-of', body, (r) => {
        const out = [el('span', 'Started best of ' + r.branches.length + ' (' + r.id + '): ')];
        r.branches.forEach((b, i) => out.push(i ? el('span', ', ') : el('span', ''), taskLink(b)));
        $('#fork-result').replaceChildren(...out);
      });
    });
  }

  startForm();
  forkPanel();
})();
`;
