// A marker drawn on a screenshot: an SVG overlay whose viewBox is the screenshot's pixel size, so it scales with the
// image; a desktop step's markers numbered by call.
import { num } from './markup';
import type { Marker, Point, Size } from './markers';
import type { ViewCall } from './view';

const pts = (points: readonly Point[]) => points.map((p) => `${num(p.x)},${num(p.y)}`).join(' ');

interface Pen {
  stroke: number;
  radius: number;
}

function penFor(image: Size): Pen {
  return { stroke: Math.max(2, image.width / 400), radius: Math.max(8, image.width / 90) };
}

/** A line drawn twice: a white halo under a coloured stroke, so it shows on any background. */
function line(a: Point, b: Point, pen: Pen, dashed = false): string {
  const coords = `x1="${num(a.x)}" y1="${num(a.y)}" x2="${num(b.x)}" y2="${num(b.y)}"`;
  const dash = dashed ? ` stroke-dasharray="${num(pen.stroke * 3)} ${num(pen.stroke * 2)}"` : '';
  return (
    `<line class="halo" ${coords} stroke-width="${num(pen.stroke * 2.5)}"/>` +
    `<line class="ink" ${coords} stroke-width="${num(pen.stroke)}"${dash}/>`
  );
}

function ring(at: Point, r: number, pen: Pen, cls = ''): string {
  const c = `cx="${num(at.x)}" cy="${num(at.y)}" r="${num(r)}"`;
  return (
    `<circle class="halo" ${c} fill="none" stroke-width="${num(pen.stroke * 2.5)}"/>` +
    `<circle class="ink${cls ? ` ${cls}` : ''}" ${c} fill="none" stroke-width="${num(pen.stroke)}"/>`
  );
}

/** The exact point of the marker: a small filled dot whose centre is the action's pixel position. */
function centre(at: Point, pen: Pen): string {
  return `<circle class="marker-center" cx="${num(at.x)}" cy="${num(at.y)}" r="${num(pen.stroke * 1.2)}"/>`;
}

function head(points: readonly Point[]): string {
  return points.length > 0 ? `<polygon class="head" points="${pts(points)}"/>` : '';
}

function markerBody(marker: Marker, pen: Pen): { at: Point; body: string } {
  switch (marker.kind) {
    case 'point': {
      const { at } = marker;
      const arm = pen.radius * 1.8;
      const cross =
        line({ x: at.x - arm, y: at.y }, { x: at.x - pen.radius * 0.4, y: at.y }, pen) +
        line({ x: at.x + pen.radius * 0.4, y: at.y }, { x: at.x + arm, y: at.y }, pen) +
        line({ x: at.x, y: at.y - arm }, { x: at.x, y: at.y - pen.radius * 0.4 }, pen) +
        line({ x: at.x, y: at.y + pen.radius * 0.4 }, { x: at.x, y: at.y + arm }, pen);
      return { at, body: ring(at, pen.radius, pen) + cross + centre(at, pen) };
    }
    case 'drag': {
      const { from, to } = marker;
      const path = from
        ? line(from, to, pen, true) + head(marker.head) + ring(from, pen.radius * 0.7, pen, 'start')
        : '';
      return { at: to, body: path + ring(to, pen.radius * (from ? 0.5 : 1), pen) + centre(to, pen) };
    }
    case 'scroll': {
      const { at, to } = marker;
      return { at, body: line(at, to, pen) + head(marker.head) + ring(at, pen.radius * 0.7, pen) + centre(at, pen) };
    }
  }
}

/** A desktop marker: the number of its call in the step, and whether to write that number next to it. */
export interface CallMark {
  marker: Marker;
  call: number;
  labelled: boolean;
}

function markerGroup(marker: Marker, pen: Pen, mark?: Omit<CallMark, 'marker'>): string {
  const { at, body } = markerBody(marker, pen);
  const direction = marker.kind === 'scroll' ? ` data-direction="${marker.direction}"` : '';
  const call = mark ? ` data-call="${mark.call}"` : '';
  const label = mark?.labelled
    ? `<text class="marker-label" x="${num(at.x + pen.radius * 1.2)}" y="${num(at.y - pen.radius * 1.2)}" ` +
      `font-size="${num(pen.radius * 2)}">${mark.call}</text>`
    : '';
  return (
    `<g class="marker marker-${marker.kind}" data-kind="${marker.kind}" data-x="${num(at.x)}" ` +
    `data-y="${num(at.y)}"${direction}${call}>${body}${label}</g>`
  );
}

function overlay(inner: string, image: Size): string {
  return (
    `<svg class="overlay" viewBox="0 0 ${image.width} ${image.height}" preserveAspectRatio="none" ` +
    `xmlns="http://www.w3.org/2000/svg" aria-hidden="true">${inner}</svg>`
  );
}

/** The SVG overlay of a screenshot: viewBox = the screenshot's pixel size, so it scales with the image. */
export function markerSvg(marker: Marker | null, image: Size): string {
  return overlay(marker ? markerGroup(marker, penFor(image)) : '', image);
}

/** The overlay of a desktop step's screenshot: one marker per call that acted on a point. */
export function callMarkersSvg(marks: readonly CallMark[], image: Size): string {
  const pen = penFor(image);
  return overlay(marks.map(({ marker, ...mark }) => markerGroup(marker, pen, mark)).join(''), image);
}

/** The markers of a desktop step's calls, numbered by call (labels written only when there are several). */
export function callMarks(calls: readonly ViewCall[]): CallMark[] {
  const marked = calls.flatMap((c, i) => (c.marker ? [{ marker: c.marker, call: i + 1 }] : []));
  return marked.map((m) => ({ ...m, labelled: marked.length > 1 }));
}
