// The takeover's own viewer: one small HTML page (no framework, no external files) that shows the screencast on a
// canvas and forwards the person's mouse, wheel and keys, with an address bar for navigations. It reconnects when its
// socket drops (the lease outlives a disconnect) and stops when the lease ends. The run console's live view shares
// its canvas code (TAKEOVER_CANVAS_JS).

/**
 * Browser JavaScript shared by this page and the run console's live view (no imports: pasted into a script). It
 * defines `drawTakeoverFrame(canvas, frame)`, which paints a `frame` message (decoded from bytes, so a CSP without
 * data: images allows it), and `forwardTakeoverInput(canvas, send)`, which sends the person's mouse, wheel and keys on
 * the canvas as input events in the frame's CSS pixels.
 */
export const TAKEOVER_CANVAS_JS = String.raw`
function drawTakeoverFrame(canvas, m) {
  const bytes = Uint8Array.from(atob(m.data), (c) => c.charCodeAt(0));
  return createImageBitmap(new Blob([bytes], { type: 'image/jpeg' })).then((bitmap) => {
    if (canvas.width !== m.width || canvas.height !== m.height) {
      canvas.width = m.width;
      canvas.height = m.height;
    }
    canvas.getContext('2d').drawImage(bitmap, 0, 0, m.width, m.height);
    bitmap.close();
  });
}
function forwardTakeoverInput(canvas, send) {
  const point = (e) => {
    const r = canvas.getBoundingClientRect();
    return { x: ((e.clientX - r.left) * canvas.width) / r.width, y: ((e.clientY - r.top) * canvas.height) / r.height };
  };
  const buttons = ['left', 'middle', 'right'];
  let moveQueued;
  canvas.addEventListener('mousemove', (e) => {
    if (moveQueued) return;
    moveQueued = requestAnimationFrame(() => (moveQueued = undefined));
    send({ type: 'mouse', action: 'move', ...point(e) });
  });
  for (const action of ['down', 'up']) {
    canvas.addEventListener('mouse' + action, (e) => {
      const at = point(e);
      canvas.focus({ preventScroll: true }); // a scroll here would move the canvas under the pointer
      send({ type: 'mouse', action, ...at, button: buttons[e.button] || 'left', clickCount: e.detail || 1 });
    });
  }
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    send({ type: 'mouse', action: 'wheel', ...point(e), deltaX: e.deltaX, deltaY: e.deltaY });
  }, { passive: false });
  canvas.addEventListener('contextmenu', (e) => e.preventDefault());
  const printable = (e) => e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey;
  canvas.addEventListener('keydown', (e) => {
    e.preventDefault();
    send(printable(e) ? { type: 'text', text: e.key } : { type: 'key', action: 'down', key: e.key });
  });
  canvas.addEventListener('keyup', (e) => {
    e.preventDefault();
    if (!printable(e)) send({ type: 'key', action: 'up', key: e.key });
  });
}
`;

/** The page's script: reads the token from its own address, opens <this path>/ws with it, draws and forwards. */
const SCRIPT = String.raw`
(() => {
  ${TAKEOVER_CANVAS_JS}
  const token = new URLSearchParams(location.search).get('token') || '';
  const wsUrl = location.origin.replace(/^http/, 'ws') + location.pathname.replace(/\/$/, '') + '/ws?token=' +
    encodeURIComponent(token);
  const canvas = document.getElementById('screen');
  const status = document.getElementById('status');
  const address = document.getElementById('url');
  let ws;
  let ended = false;
  const send = (event) => ws && ws.readyState === 1 && ws.send(JSON.stringify(event));
  const say = (text) => (status.textContent = text);
  function connect() {
    ws = new WebSocket(wsUrl);
    ws.onopen = () => say('connected');
    ws.onclose = () => {
      if (!ended) {
        say('disconnected; reconnecting…');
        setTimeout(connect, 1000);
      }
    };
    ws.onmessage = (message) => {
      const m = JSON.parse(message.data);
      if (m.type === 'frame') {
        void drawTakeoverFrame(canvas, m);
        if (document.activeElement !== address) address.value = m.url;
        document.title = (m.title || m.url) + ' (taken over)';
      } else if (m.type === 'blocked') say('blocked by policy: ' + m.url + ': ' + m.reason);
      else if (m.type === 'error') say(m.message);
      else if (m.type === 'ended') {
        ended = true;
        say('handed back: the agent has the browser again');
      }
    };
  }
  forwardTakeoverInput(canvas, send);
  document.getElementById('bar').addEventListener('submit', (e) => {
    e.preventDefault();
    send({ type: 'navigate', url: address.value });
    canvas.focus();
  });
  connect();
})();
`;

/** The viewer page, its one inline script allowed by `nonce` (the response's Content-Security-Policy names it). */
export function viewerPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Taken over</title>
<style>
body { margin: 0; font: 14px system-ui, sans-serif; background: #1e1e1e; color: #eee; }
#bar { display: flex; gap: 8px; padding: 6px; align-items: center; }
#url { flex: 1; font: inherit; padding: 3px 6px; }
#status { opacity: 0.8; }
canvas { display: block; max-width: 100%; outline: none; background: #fff; }
</style>
</head>
<body>
<form id="bar"><input id="url" aria-label="Address" autocomplete="off"><button>Go</button><span id="status">connecting…</span></form>
<canvas id="screen" tabindex="0" width="1280" height="720"></canvas>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}

/** The page's Content-Security-Policy: its own script only, frames drawn from data: URLs, sockets to itself. */
export function viewerPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
