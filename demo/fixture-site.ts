// A small hotel-booking site for workflow tests and the shipped evaluation task set ({{fixture}}), with elements at fixed positions so scripted clicks land
// (viewport 1440×900; model point [x, y] in 1000×1000 space → (1.44x, 0.9y) px).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const HOTELS = [
  { id: 1, name: 'Harbor View Lisbon', city: 'Lisbon', price: '€120 per night' },
  { id: 2, name: 'Alfama Courtyard', city: 'Lisbon', price: '€95 per night' },
  { id: 3, name: 'Porto Riverside', city: 'Porto', price: '€88 per night' },
];

const page = (title: string, body: string) => `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>
<style>body{margin:0;font:16px sans-serif}.abs{position:absolute;box-sizing:border-box}
a.result{display:block;position:absolute;left:320px;width:800px;height:60px;border:1px solid #99a;padding:18px;color:#124}
</style></head><body><h1 class="abs" style="left:520px;top:40px;margin:0">${title}</h1>${body}</body></html>`;

function route(url: URL): { status: number; html: string } {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  if (url.pathname === '/') {
    return {
      status: 200,
      html: page(
        'Harbor Hotels',
        `<form action="/search" method="get">
        <input id="q" name="q" class="abs" style="left:520px;top:160px;width:400px;height:40px" placeholder="Where to?">
        <button class="abs" style="left:940px;top:160px;width:120px;height:40px">Search</button></form>`,
      ),
    };
  }
  if (url.pathname === '/search') {
    const q = (url.searchParams.get('q') ?? '').toLowerCase();
    const hits = HOTELS.filter((h) => h.city.toLowerCase().includes(q));
    const list = hits
      .map(
        (h, i) =>
          `<a class="result" style="top:${200 + i * 80}px" href="/hotel/${h.id}">${esc(h.name)} · ${esc(h.price)}</a>`,
      )
      .join('');
    return {
      status: 200,
      html: page(
        `Hotels in ${esc(q || 'anywhere')}`,
        list || '<p class="abs" style="top:200px;left:520px">No hotels found</p>',
      ),
    };
  }
  const hotel = /^\/hotel\/(\d+)$/.exec(url.pathname);
  const h = hotel ? HOTELS.find((x) => x.id === Number(hotel[1])) : undefined;
  if (h) {
    return {
      status: 200,
      html: page(
        esc(h.name),
        `<p class="abs" style="left:520px;top:160px">Price: <b id="price">${esc(h.price)}</b> in ${esc(h.city)}</p>
        <p class="abs" style="left:520px;top:220px">Breakfast included. Free cancellation until 48 hours before arrival.</p>
        <a id="book" class="abs" style="left:620px;top:380px;width:200px;height:40px;background:#246;color:#fff;padding:10px" href="/book/${h.id}">Book now</a>`,
      ),
    };
  }
  const book = /^\/book\/(\d+)$/.exec(url.pathname);
  if (book) {
    return {
      status: 200,
      html: page(
        'Your booking',
        `<form action="/confirm" method="get"><input type="hidden" name="hotel" value="${esc(book[1] ?? '')}">
        <input id="name" name="name" class="abs" style="left:520px;top:280px;width:400px;height:40px" placeholder="Your name">
        <button class="abs" style="left:620px;top:360px;width:200px;height:40px">Confirm</button></form>`,
      ),
    };
  }
  if (url.pathname === '/ticker') {
    // A page that never stops changing: a screenshot of it is out of date a moment later.
    return {
      status: 200,
      html: page(
        'Ticker',
        `<p id="n" class="abs" style="left:520px;top:160px;font-size:48px">0</p>
        <script>let n = 0; setInterval(() => { document.getElementById('n').textContent = String(++n); }, 20);</script>`,
      ),
    };
  }
  if (url.pathname === '/captcha') {
    // Announces a captcha solve that never finishes (the console protocol remote browsers use).
    return {
      status: 200,
      html: page('Checking your browser', `<script>console.log('browserbase-solving-started')</script>`),
    };
  }
  if (url.pathname === '/confirm') {
    const name = esc(url.searchParams.get('name') ?? '');
    return {
      status: 200,
      html: page(
        'Booking confirmed',
        `<p id="done" class="abs" style="left:520px;top:160px">Thank you, ${name}. Reference HB-${url.searchParams.get('hotel')}-42.</p>`,
      ),
    };
  }
  return { status: 404, html: page('Not found', '') };
}

export interface FixtureSite {
  url: string;
  close(): Promise<void>;
}

export async function startFixtureSite(listenPort = 0): Promise<FixtureSite> {
  const server = http.createServer((req, res) => {
    const { status, html } = route(new URL(req.url ?? '/', 'http://localhost'));
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
