// Reading a grounding model's output into a screen point. Models write points many ways: `(x, y)`, `x, y`,
// `x=… y=…`, JSON `{"x": …, "y": …}`, `[x, y]`, `<point>x y</point>`, `click(x=…, y=…)`, a box `[x1, y1, x2, y2]`
// (its centre is taken) or Qwen-style box tokens; the first point in the text wins. Values both ≤ 1 are fractions of
// the screen. The result is rounded to whole pixels and must lie on the screen.

export interface ScreenSize {
  width: number;
  height: number;
}

export type PointResult = { x: number; y: number } | { error: string };

const N = String.raw`([-+]?\d+(?:\.\d+)?)`;
const SEP = String.raw`\s*,\s*`;

interface Reader {
  pattern: RegExp;
  /** The point of a match (a box gives its centre). */
  point(values: number[]): [number, number];
}

const centre = ([x1 = 0, y1 = 0, x2 = 0, y2 = 0]: number[]): [number, number] => [(x1 + x2) / 2, (y1 + y2) / 2];
const pair = ([x = 0, y = 0]: number[]): [number, number] => [x, y];

/** In priority order for matches starting at the same place. */
const READERS: readonly Reader[] = [
  {
    pattern: new RegExp(
      String.raw`<\|box_start\|>\s*\(?\s*${N}${SEP}${N}\s*\)?${SEP}\(?\s*${N}${SEP}${N}\s*\)?\s*<\|box_end\|>`,
    ),
    point: centre,
  },
  { pattern: new RegExp(String.raw`<point>\s*[[(]?\s*${N}(?:${SEP}|\s+)${N}\s*[\])]?\s*</point>`, 'i'), point: pair },
  { pattern: new RegExp(String.raw`[[(]\s*${N}${SEP}${N}${SEP}${N}${SEP}${N}\s*[\])]`), point: centre },
  {
    pattern: new RegExp(String.raw`\bx["']?\s*[:=]\s*["']?${N}["']?\s*[,;]?\s*["']?y["']?\s*[:=]\s*["']?${N}`, 'i'),
    point: pair,
  },
  { pattern: new RegExp(String.raw`[[(]\s*${N}${SEP}${N}\s*[\])]`), point: pair },
  { pattern: new RegExp(String.raw`(?<![\w.]|\d\s*,\s*)${N}${SEP}${N}(?![\w.]|\s*,\s*\d)`), point: pair },
];

interface Found {
  at: number;
  x: number;
  y: number;
}

function firstPoint(text: string): Found | undefined {
  let best: Found | undefined;
  for (const reader of READERS) {
    const m = reader.pattern.exec(text);
    if (!m || (best && m.index >= best.at)) continue;
    const [x, y] = reader.point(m.slice(1).map(Number));
    best = { at: m.index, x, y };
  }
  return best;
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** The first point in a grounding output, in screen pixels; an error text when there is none or it is off screen. */
export function parsePoint(text: string, screen: ScreenSize): PointResult {
  const found = firstPoint(text);
  if (!found) return { error: `The grounding model gave no point: "${clip(text)}".` };
  let { x, y } = found;
  if (x >= 0 && y >= 0 && x <= 1 && y <= 1) [x, y] = [x * screen.width, y * screen.height];
  if (x < 0 || y < 0 || x > screen.width || y > screen.height) {
    return {
      error:
        `The grounding model's point (${found.x}, ${found.y}) is outside the ` +
        `${screen.width}×${screen.height} screen.`,
    };
  }
  // The right and bottom edges belong to the last pixel column and row.
  return { x: Math.min(Math.round(x), screen.width - 1), y: Math.min(Math.round(y), screen.height - 1) };
}
