// The demo website: "Tidewater Travel", a small hotel-booking site served on 127.0.0.1 for `cua demo`.
// Home with a search form, a results list, hotel pages (rooms, a map popup), a booking form and a
// confirmation. No external resources. The layout is fixed (a 1200 px column in a 1440×900 viewport), so the
// scripted stand-in model's clicks land; a real model sees an ordinary site. Bookings are kept in memory
// and exposed at /_bookings so tests can check what the agent did.
import http from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';

interface Room {
  id: string;
  name: string;
  price: number;
  detail: string;
}
interface Hotel {
  id: number;
  name: string;
  city: string;
  area: string;
  rating: number;
  reviews: number;
  blurb: string;
  rooms: Room[];
  sights: string[];
}

const HOTELS: Hotel[] = [
  {
    id: 1,
    name: 'Harbor View Lisbon',
    city: 'Lisbon',
    area: 'Baixa, 300 m from Praça do Comércio',
    rating: 9.1,
    reviews: 1284,
    blurb:
      'A restored 19th-century warehouse on the river front, with a roof terrace over the Tagus, a quiet courtyard and a breakfast of pastéis de nata baked next door.',
    rooms: [
      { id: 'standard', name: 'Standard double', price: 118, detail: '18 m², city view, queen bed' },
      { id: 'superior', name: 'Superior double', price: 139, detail: '24 m², balcony, king bed' },
      { id: 'suite', name: 'Sea-view suite', price: 205, detail: '40 m², river view, sofa bed' },
    ],
    sights: [
      'Praça do Comércio — 4 min walk',
      'Santa Justa Lift — 7 min walk',
      'Alfama and the cathedral — 12 min walk',
      'Cais do Sodré station — 9 min walk',
    ],
  },
  {
    id: 2,
    name: 'Alfama Courtyard',
    city: 'Lisbon',
    area: 'Alfama, near the cathedral',
    rating: 8.7,
    reviews: 642,
    blurb: 'Eleven rooms around a tiled courtyard in the old Moorish quarter; fado nights on Fridays.',
    rooms: [
      { id: 'standard', name: 'Courtyard double', price: 95, detail: '16 m², courtyard view' },
      { id: 'superior', name: 'Terrace room', price: 128, detail: '22 m², private terrace' },
    ],
    sights: ['Lisbon Cathedral — 3 min walk', 'São Jorge Castle — 10 min walk'],
  },
  {
    id: 3,
    name: 'Bairro Alto Lofts',
    city: 'Lisbon',
    area: 'Bairro Alto, by the viewpoint',
    rating: 8.2,
    reviews: 377,
    blurb: 'Loft apartments with kitchens above the liveliest streets in town; light sleepers bring earplugs.',
    rooms: [{ id: 'standard', name: 'Loft studio', price: 104, detail: '30 m², kitchenette' }],
    sights: ['Miradouro de São Pedro de Alcântara — 2 min walk'],
  },
  {
    id: 4,
    name: 'Porto Riverside',
    city: 'Porto',
    area: 'Ribeira, on the Douro',
    rating: 8.9,
    reviews: 903,
    blurb: 'Rooms over the Douro with port-wine cellars across the bridge.',
    rooms: [{ id: 'standard', name: 'River double', price: 88, detail: '17 m², river view' }],
    sights: ['Dom Luís I Bridge — 3 min walk'],
  },
];

export const DEMO_CHECK_IN = '12 Mar 2027';
export const DEMO_NIGHTS = 2;

/** The booking reference the site gives a hotel and room (stable, so a scripted answer can quote it). */
export function bookingReference(hotelId: number, roomId: string): string {
  const h = createHash('sha256').update(`${hotelId}/${roomId}/${DEMO_CHECK_IN}/${DEMO_NIGHTS}`).digest('hex');
  return `TW-${parseInt(h.slice(0, 6), 16).toString().slice(0, 6).padStart(6, '0')}`;
}

export interface Booking {
  reference: string;
  hotel: string;
  room: string;
  guest: string;
  nights: number;
  total: number;
}

export interface DemoSite {
  url: string;
  port: number;
  bookings: Booking[];
  close(): Promise<void>;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const euro = (n: number) => `€${n}`;

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2733;background:#f4f6f8}
a{color:#0b5cad}header{height:64px;background:#0d3b66;color:#fff}
header .in{width:1200px;margin:0 auto;height:64px;display:flex;align-items:center;gap:32px}
header .logo{font-weight:700;font-size:22px;color:#fff;text-decoration:none;width:260px;display:flex;align-items:center;gap:10px}
.mark{width:26px;height:26px;border-radius:50% 50% 50% 0;background:#f4d35e;display:inline-block}
header nav a{color:#cfe3f7;text-decoration:none;margin-right:24px}
main{width:1200px;margin:0 auto;padding:24px 0}
.hero{height:300px;border-radius:12px;background:linear-gradient(120deg,#1b6ca8,#3fa7d6 60%,#f4d35e);padding:48px;color:#fff}
.hero h1{margin:0 0 24px;font-size:36px}
.search{display:flex;gap:12px;background:#fff;border-radius:10px;padding:12px;width:1000px}
.search label{display:flex;flex-direction:column;font-size:12px;color:#566}
.search input{height:44px;border:1px solid #c5ccd4;border-radius:6px;padding:0 12px;font-size:17px}
.search button,.btn{height:56px;border:0;border-radius:8px;background:#ee6c4d;color:#fff;font-size:18px;font-weight:600;padding:0 28px;cursor:pointer;text-decoration:none;display:inline-flex;align-items:center;justify-content:center}
.cards{display:flex;gap:24px;margin-top:32px}.card{flex:1;height:150px;border-radius:10px;background:#fff;padding:20px;box-shadow:0 1px 3px #0002}
.layout{display:flex;gap:24px}.filters{width:260px;background:#fff;border-radius:10px;padding:20px;height:420px}
.results{width:916px}.result{display:flex;height:150px;background:#fff;border-radius:10px;margin-bottom:16px;box-shadow:0 1px 3px #0002;overflow:hidden}
.thumb{width:200px;background:linear-gradient(135deg,#8ecae6,#219ebc)}.result .body{flex:1;padding:18px}
.result h2{margin:0 0 4px;font-size:21px}.result .side{width:200px;padding:18px;text-align:right}
.score{display:inline-block;background:#0d3b66;color:#fff;border-radius:6px;padding:2px 8px;font-weight:700}
.price{font-size:22px;font-weight:700}.detail{display:flex;gap:24px}.info{width:816px}
.panel{width:360px;background:#fff;border-radius:10px;padding:24px;box-shadow:0 1px 3px #0002;position:sticky;top:24px;height:330px}
.panel .btn{width:312px;margin-top:12px}.panel .map{display:block;margin-top:16px;text-align:center;height:24px}
.box{background:#fff;border-radius:10px;padding:20px 24px;margin-bottom:16px;box-shadow:0 1px 3px #0002}
table{width:100%;border-collapse:collapse}td,th{text-align:left;padding:10px 8px;border-bottom:1px solid #e3e7eb}
form.book{display:flex;flex-direction:column;gap:18px;width:520px}
form.book input,form.book select{height:48px;border:1px solid #c5ccd4;border-radius:6px;padding:0 12px;font-size:17px;width:520px}
form.book label{display:flex;flex-direction:column;gap:6px;font-size:14px;color:#455}
.mapbox{height:560px;border-radius:10px;background:repeating-linear-gradient(45deg,#dbe7d3 0 24px,#d0e0c6 24px 48px);position:relative}
.pin{position:absolute;left:560px;top:130px;background:#ee6c4d;color:#fff;border-radius:16px;padding:6px 14px;font-weight:700}
.backbar{position:sticky;top:0;z-index:2;height:48px;display:flex;align-items:center;background:#f4f6f8;margin-bottom:8px}
.notice{background:#e9f6ec;border:1px solid #9fd4ab;border-radius:10px;padding:24px}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · Tidewater Travel</title>
<style>${STYLE}</style></head><body><header><div class="in"><a class="logo" href="/"><span class="mark"></span>Tidewater Travel</a>
<nav><a href="/">Stays</a><a href="/">Deals</a><a href="/">Help</a></nav></div></header><main>${body}</main></body></html>`;
}

function home(): string {
  const cards = ['Lisbon', 'Porto', 'Seville']
    .map(
      (c) =>
        `<a class="card" href="/search?q=${c}" style="text-decoration:none;color:inherit"><h3 style="margin:0">${c}</h3><p>Stays from ${euro(c === 'Porto' ? 88 : c === 'Lisbon' ? 95 : 110)} a night</p></a>`,
    )
    .join('');
  return page(
    'Find a stay',
    `<section class="hero"><h1>Find your next stay by the water</h1>
<form class="search" action="/search" method="get">
<label style="width:460px">Destination<input id="destination" name="q" placeholder="Where are you going?" autocomplete="off"></label>
<label style="width:200px">Check-in<input name="in" value="${DEMO_CHECK_IN}"></label>
<label style="width:120px">Nights<input name="nights" value="${DEMO_NIGHTS}"></label>
<button id="search" type="submit">Search</button></form></section>
<section class="cards">${cards}</section>`,
  );
}

function results(q: string): string {
  const hits = HOTELS.filter((h) => h.city.toLowerCase() === q.trim().toLowerCase()).sort(
    (a, b) => b.rating - a.rating,
  );
  const list = hits
    .map((h) => {
      const from = Math.min(...h.rooms.map((r) => r.price));
      return `<article class="result"><div class="thumb"></div><div class="body"><h2>${esc(h.name)}</h2>
<div>${esc(h.area)}</div><div style="margin-top:8px"><span class="score">${h.rating}</span> ${h.reviews} reviews</div></div>
<div class="side"><div>from</div><div class="price">${euro(from)}</div><div style="font-size:13px;color:#667">per night</div>
<a class="view" href="/hotel/${h.id}">View stay ›</a></div></article>`;
    })
    .join('');
  return page(
    `Stays in ${q}`,
    `<h1 style="margin:0 0 16px;font-size:26px">${hits.length} stays in ${esc(q || 'anywhere')} · ${DEMO_CHECK_IN}, ${DEMO_NIGHTS} nights</h1>
<div class="layout"><aside class="filters"><b>Sort</b><p>● Guest rating<br>○ Price</p><b>Filters</b>
<p><label><input type="checkbox" checked> Free cancellation</label><br><label><input type="checkbox"> Breakfast included</label><br>
<label><input type="checkbox"> Pool</label></p></aside><section class="results">${list || '<p>No stays match your search.</p>'}</section></div>`,
  );
}

function hotelPage(h: Hotel): string {
  const rooms = h.rooms
    .map((r) => `<tr><td>${esc(r.name)}</td><td>${esc(r.detail)}</td><td><b>${euro(r.price)}</b> / night</td></tr>`)
    .join('');
  const from = Math.min(...h.rooms.map((r) => r.price));
  return page(
    h.name,
    `<div class="detail"><div class="info"><div class="box"><h1 style="margin:0;font-size:30px">${esc(h.name)}</h1>
<div>${esc(h.area)} · <span class="score">${h.rating}</span> ${h.reviews} reviews</div><p>${esc(h.blurb)}</p></div>
<div class="box"><h2 style="margin-top:0">Rooms for ${DEMO_CHECK_IN}, ${DEMO_NIGHTS} nights</h2><table><tr><th>Room</th><th>Details</th><th>Price</th></tr>${rooms}</table>
<p style="font-size:14px;color:#566">Breakfast included. Free cancellation until 48 hours before arrival.</p></div>
<div class="box"><h2 style="margin-top:0">Guest reviews</h2><p>“Perfect location, spotless rooms.” — Marta</p><p>“The terrace at sunset!” — Jonas</p>
<p>“Staff booked us a fado dinner.” — Priya</p></div></div>
<aside class="panel"><div style="font-size:14px;color:#566">from</div><div class="price">${euro(from)} <span style="font-size:15px;font-weight:400">/ night</span></div>
<p style="font-size:14px">${DEMO_CHECK_IN} · ${DEMO_NIGHTS} nights · 2 guests</p>
<a id="reserve" class="btn" href="/book/${h.id}">Reserve a room</a>
<a id="map" class="map" href="/map/${h.id}" target="_blank">Show on map ↗</a></aside></div>`,
  );
}

function mapPage(h: Hotel): string {
  const sights = h.sights.map((s) => `<li>${esc(s)}</li>`).join('');
  return page(
    `Map · ${h.name}`,
    `<div class="backbar"><a id="back" href="/hotel/${h.id}">‹ Back to ${esc(h.name)}</a></div>
<div class="mapbox"><span class="pin">● ${esc(h.name)}</span></div>
<div class="box" style="margin-top:16px"><h2 style="margin-top:0">What is nearby</h2><ul>${sights}</ul></div>
<div class="box"><h2 style="margin-top:0">Getting there</h2><p>From the airport: metro red line to Alameda, then green line; about 35 minutes.</p>
<p>By taxi: about 20 minutes and €15–20. Check-in from 15:00, check-out until 11:00.</p>
<p>Parking: public garage 250 m away, €22 a day.</p></div>`,
  );
}

function bookPage(h: Hotel, error = ''): string {
  const options = h.rooms
    .map((r) => `<option value="${r.id}">${esc(r.name)} — ${euro(r.price)} / night</option>`)
    .join('');
  return page(
    `Book ${h.name}`,
    `<div class="box"><h1 style="margin:0 0 8px;font-size:28px">Book ${esc(h.name)}</h1><p style="margin:0">${DEMO_CHECK_IN} · ${DEMO_NIGHTS} nights · 2 guests</p></div>
<div class="box"><form class="book" method="post" action="/book/${h.id}">${error ? `<p style="color:#b00020;margin:0">${esc(error)}</p>` : ''}
<label>Room<select name="room">${options}</select></label>
<label>Guest name<input id="guest" name="guest" placeholder="First and last name" autocomplete="off"></label>
<label>Email (optional)<input name="email" placeholder="you@example.com" autocomplete="off"></label>
<button id="confirm" class="btn" type="submit" style="width:260px">Confirm booking</button></form></div>`,
  );
}

function confirmation(b: Booking): string {
  return page(
    'Booking confirmed',
    `<div class="notice"><h1 style="margin:0 0 12px;font-size:28px">✓ Booking confirmed</h1>
<p>Reference <b id="reference">${esc(b.reference)}</b></p>
<p>${esc(b.hotel)} · ${esc(b.room)} · ${DEMO_CHECK_IN}, ${b.nights} nights · total <b>${euro(b.total)}</b></p>
<p>Guest: <b id="guest-name">${esc(b.guest)}</b></p></div>`,
  );
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts the demo site on 127.0.0.1 (port 0 = a free port). */
export async function startDemoSite(opts: { port?: number } = {}): Promise<DemoSite> {
  const bookings: Booking[] = [];
  const send = (res: http.ServerResponse, status: number, html: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html);
  };
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const hotelMatch = /^\/(hotel|map|book)\/(\d+)$/.exec(url.pathname);
    const hotel = hotelMatch ? HOTELS.find((h) => h.id === Number(hotelMatch[2])) : undefined;
    if (url.pathname === '/') return send(res, 200, home());
    if (url.pathname === '/search') return send(res, 200, results(url.searchParams.get('q') ?? ''));
    if (url.pathname === '/_bookings') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(bookings));
    }
    const confirmed = /^\/booking\/(TW-\d+)$/.exec(url.pathname);
    const done = confirmed ? bookings.findLast((b) => b.reference === confirmed[1]) : undefined;
    if (done) return send(res, 200, confirmation(done));
    if (!hotelMatch || !hotel) return send(res, 404, page('Not found', '<h1>This page does not exist.</h1>'));
    if (hotelMatch[1] === 'hotel') return send(res, 200, hotelPage(hotel));
    if (hotelMatch[1] === 'map') return send(res, 200, mapPage(hotel));
    if (req.method !== 'POST') return send(res, 200, bookPage(hotel));
    const form = new URLSearchParams(await readBody(req));
    const guest = (form.get('guest') ?? '').trim();
    const room = hotel.rooms.find((r) => r.id === form.get('room')) ?? hotel.rooms[0];
    if (!guest || !room) return send(res, 200, bookPage(hotel, 'Please enter the guest name.'));
    const booking: Booking = {
      reference: bookingReference(hotel.id, room.id),
      hotel: hotel.name,
      room: room.name,
      guest,
      nights: DEMO_NIGHTS,
      total: room.price * DEMO_NIGHTS,
    };
    bookings.push(booking);
    // Post/redirect/get: the confirmation has its own address.
    res.writeHead(303, { location: `/booking/${booking.reference}` });
    return res.end();
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, page('Error', `<pre>${esc(String(err))}</pre>`)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    bookings,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
