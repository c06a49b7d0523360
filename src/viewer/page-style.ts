// The trajectory page's style and behaviour: its CSS, its one script (keyboard and click navigation between steps),
// and the Content-Security-Policy that allows no network at all and only that script (by its hash), so even a missed
// escape could neither load nor run anything.
import { createHash } from 'node:crypto';

export const CSS = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f3f4f6}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2em 0;background:#f6f8fa;border:1px solid #e5e7eb;border-radius:4px;padding:6px 8px}
nav.steps{position:fixed;top:0;left:0;bottom:0;width:250px;overflow:auto;background:#111827;color:#e5e7eb;padding:10px 0}
nav.steps h2{font-size:13px;margin:0 12px 8px;color:#9ca3af;text-transform:uppercase;letter-spacing:.05em}
nav.steps ol{list-style:none;margin:0;padding:0}
nav.steps a{display:flex;gap:6px;padding:4px 12px;color:inherit;text-decoration:none;white-space:nowrap;overflow:hidden}
nav.steps a .n{min-width:2em;text-align:right;color:#9ca3af}
nav.steps a .s{overflow:hidden;text-overflow:ellipsis}
nav.steps a:hover{background:#1f2937}
nav.steps a.current{background:#2563eb;color:#fff}
nav.steps a.current .n{color:#fff}
main{margin-left:250px;padding:16px 20px 40vh}
header.run,footer.run,section.step{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:12px 16px;margin-bottom:16px}
h1{font-size:20px;margin:0 0 8px}
h2{font-size:16px;margin:0 0 6px}
h3{font-size:12px;margin:8px 0 2px;color:#6b7280;text-transform:uppercase;letter-spacing:.05em}
.label{display:inline-block;font-size:12px;color:#6b7280;text-transform:uppercase;letter-spacing:.05em;margin-right:6px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0}
dl.facts dt{color:#6b7280}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.status{font-weight:600;padding:1px 8px;border-radius:10px;background:#e5e7eb}
.status-complete{background:#dcfce7;color:#166534}
.status-failed,.status-cancelled,.status-max_rounds{background:#fee2e2;color:#991b1b}
.status-running,.status-waiting_for_user{background:#fef9c3;color:#854d0e}
pre.answer{background:#eff6ff;border-color:#bfdbfe;font-size:14px}
section.step{scroll-margin-top:12px;transition:box-shadow .15s}
section.step.current{border-color:#2563eb;box-shadow:0 0 0 3px rgba(37,99,235,.35)}
section.step h2 .num{color:#2563eb}
section.step h2 code.summary{font-size:14px}
.badge{font-size:11px;font-weight:600;padding:1px 7px;border-radius:10px;vertical-align:middle;margin-left:4px}
.badge.redecided{background:#fef3c7;color:#92400e}
.badge.invalid{background:#fee2e2;color:#991b1b}
.badge.replayed{background:#dcfce7;color:#166534}
.badge.healed{background:#e0f2fe;color:#075985}
.badge.decided{background:#f3f4f6;color:#374151}
.badge.approval{background:#ede9fe;color:#5b21b6}
.badge.approval.approved{background:#dcfce7;color:#166534}
.badge.approval.denied{background:#fee2e2;color:#991b1b}
.approval-line{font-weight:600;margin:4px 0}
p.replay-of{margin:0 0 8px;font-weight:600;color:#075985}
.superseded{opacity:.55;border:1px dashed #9ca3af;border-radius:6px;padding:6px 10px;margin:0 0 12px;background:#f9fafb}
.superseded:hover{opacity:.9}
.superseded h3.superseded-title{margin-top:0;text-transform:none;letter-spacing:0;font-size:13px;color:#4b5563}
.superseded .note{margin:0 0 6px;font-weight:600;color:#92400e}
.superseded .body{grid-template-columns:minmax(0,2fr) minmax(240px,3fr)}
@media (max-width:1100px){.superseded .body{grid-template-columns:minmax(0,1fr)}}
.invalid-output h3{color:#991b1b}
.invalid-output pre.error{background:#fef2f2;border-color:#fca5a5;color:#991b1b;font-size:14px;font-weight:600}
nav.steps a .r{color:#fbbf24}
p.url{margin:0 0 8px;overflow-wrap:anywhere;font-size:12.5px}
p.url .value{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
p.url .usage{float:right;color:#666;font-size:12px}
.body{display:grid;grid-template-columns:minmax(0,3fr) minmax(240px,2fr);gap:16px;align-items:start}
@media (max-width:1100px){.body{grid-template-columns:minmax(0,1fr)}}
figure.shot{margin:0}
.frame{position:relative;line-height:0;border:1px solid #d1d5db}
.frame img{display:block;width:100%;height:auto}
svg.overlay{position:absolute;left:0;top:0;width:100%;height:100%;pointer-events:none;overflow:visible}
svg.overlay .halo{stroke:#fff;stroke-opacity:.85;stroke-linecap:round}
svg.overlay .ink{stroke:#e11d48;stroke-linecap:round}
svg.overlay .ink.start{stroke:#f59e0b}
svg.overlay .head{fill:#e11d48;stroke:#fff;stroke-width:1.5}
svg.overlay .marker-center{fill:#e11d48;stroke:#fff;stroke-width:1}
figcaption{font-size:12px;color:#6b7280;margin-top:4px;line-height:1.3}
.placeholder{padding:40px;text-align:center;color:#6b7280;background:#f9fafb;border:1px dashed #d1d5db;line-height:1.3}
dl.args{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:4px 0}
dl.args dt{color:#6b7280;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
dl.args dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
p.action-name{margin:2px 0}
ol.calls{list-style:none;margin:8px 0 0;padding:0}
ul.sub-calls{list-style:none;margin:0;padding:0}
p.sub-call-line{margin:2px 0;font-size:12px;color:#6b7280}
li.call{border:1px solid #e5e7eb;border-left:3px solid #2563eb;border-radius:4px;padding:4px 10px 6px;margin:0 0 8px}
li.call p.call-title{margin:0;font-size:12px;font-weight:600;color:#2563eb}
li.call h3{margin-top:4px}
p.where{margin:2px 0;font-size:12px;color:#6b7280}
.screen pre.screen-description{background:#f5f3ff;border-color:#ddd6fe}
svg.overlay .marker-label{fill:#e11d48;stroke:#fff;stroke-width:3px;paint-order:stroke;font-weight:700;font-family:system-ui,sans-serif}
.none{color:#9ca3af;margin:2px 0}
.user-message{border-left:3px solid #8b5cf6;padding-left:8px;margin:4px 0}
.warnings li{color:#92400e}
.keys{font-size:12px;color:#6b7280}
kbd{border:1px solid #d1d5db;border-bottom-width:2px;border-radius:3px;padding:0 4px;font-size:11px;background:#fff}
`;

/** Keyboard and click navigation between steps; works on the markup only (no run data inside the script). */
export const SCRIPT = `(function () {
  var steps = Array.prototype.slice.call(document.querySelectorAll('section.step'));
  var links = Array.prototype.slice.call(document.querySelectorAll('nav.steps a[data-step]'));
  var current = -1;
  function select(i, scroll) {
    if (steps.length === 0) return;
    i = Math.max(0, Math.min(steps.length - 1, i));
    if (current >= 0) {
      steps[current].classList.remove('current');
      links[current].classList.remove('current');
      links[current].removeAttribute('aria-current');
    }
    current = i;
    steps[i].classList.add('current');
    links[i].classList.add('current');
    links[i].setAttribute('aria-current', 'step');
    document.body.setAttribute('data-current-step', steps[i].getAttribute('data-step'));
    if (scroll) {
      steps[i].scrollIntoView({ block: 'start' });
      links[i].scrollIntoView({ block: 'nearest' });
      // Only on navigation: a fragment set while loading would make the browser jump to it once loaded.
      try { history.replaceState(null, '', '#step-' + steps[i].getAttribute('data-step')); } catch (e) {}
    }
  }
  var keys = { ArrowLeft: -1, k: -1, ArrowRight: 1, j: 1 };
  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === 'Home') select(0, true);
    else if (e.key === 'End') select(steps.length - 1, true);
    else if (Object.prototype.hasOwnProperty.call(keys, e.key)) select(current + keys[e.key], true);
    else return;
    e.preventDefault();
  });
  links.forEach(function (a, i) {
    a.addEventListener('click', function (e) { e.preventDefault(); select(i, true); });
  });
  steps.forEach(function (s, i) {
    s.addEventListener('click', function () { if (current !== i) select(i, false); });
  });
  var m = /^#step-(\\d+)$/.exec(location.hash);
  var start = m ? steps.findIndex(function (s) { return s.getAttribute('data-step') === m[1]; }) : -1;
  select(start < 0 ? 0 : start, start >= 0);
})();`;

export function contentSecurityPolicy(script: string): string {
  const hash = createHash('sha256').update(script, 'utf8').digest('base64');
  return [
    "default-src 'none'",
    'img-src data:',
    "style-src 'unsafe-inline'",
    `script-src 'sha256-${hash}'`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}
