// Specification of parsePoint: a grounding model's output read into a screen point.
import { describe, expect, it } from 'vitest';

import { parsePoint } from '../../src/desktop/agent';

const SCREEN = { width: 1280, height: 800 };

describe('parsePoint: the shapes models write', () => {
  it.each<[string, string, number, number]>([
    ['(x, y)', '(100, 200)', 100, 200],
    ['x, y', '100, 200', 100, 200],
    ['x, y in a sentence', 'The button is at 300, 400 on the screen.', 300, 400],
    ['x=… y=…', 'x=5 y=6', 5, 6],
    ['x: …, y: …', 'x: 12, y: 34', 12, 34],
    ['JSON', '{"x": 7, "y": 8}', 7, 8],
    ['JSON with string numbers', '{"x": "70", "y": "80"}', 70, 80],
    ['[x, y]', '[9, 10]', 9, 10],
    ['<point>x y</point>', '<point>11 12</point>', 11, 12],
    ['<point>(x, y)</point>', '<point>(11, 12)</point>', 11, 12],
    ['click(x=…, y=…)', 'click(x=13, y=14)', 13, 14],
    ['a box [x1, y1, x2, y2] → its centre', '[10, 20, 30, 40]', 20, 30],
    ['a box (x1, y1, x2, y2) → its centre', 'bbox (100, 100, 200, 300)', 150, 200],
    ['Qwen box tokens → the centre', '<|box_start|>(10,20),(30,40)<|box_end|>', 20, 30],
    ['fractions', '(0.5, 0.25)', 640, 200],
    ['fractions as JSON', '{"x": 0.1, "y": 0.9}', 128, 720],
    ['decimals, rounded', '(100.4, 199.6)', 100, 200],
    ['the right and bottom edges', '(1280, 800)', 1279, 799],
    ['in a code fence', '```\n(42, 43)\n```', 42, 43],
  ])('%s', (_case, text, x, y) => {
    expect(parsePoint(text, SCREEN)).toEqual({ x, y });
  });

  it.each<[string, string, number, number]>([
    ['the first of two points', 'Either (10, 20) or (30, 40).', 10, 20],
    ['a point before a box', '(1, 2) inside [10, 20, 30, 40]', 1, 2],
    ['a box before a point', '[10, 20, 30, 40] around (1, 2)', 20, 30],
    ['named before bare', 'x=3, y=4 (not 5, 6)', 3, 4],
  ])('takes %s', (_case, text, x, y) => {
    expect(parsePoint(text, SCREEN)).toEqual({ x, y });
  });
});

describe('parsePoint: refusals', () => {
  it.each<[string, string, string]>([
    ['no point', 'I cannot find that element.', 'gave no point'],
    ['a lone number', 'Element 42', 'gave no point'],
    ['right of the screen', '(5000, 10)', 'outside the 1280×800 screen'],
    ['below the screen', '[10, 900]', 'outside'],
    ['negative', '(-5, 10)', 'outside'],
  ])('%s', (_case, text, fragment) => {
    const result = parsePoint(text, SCREEN);
    expect('error' in result && result.error).toContain(fragment);
  });

  it('quotes the output, clipped to one line', () => {
    const result = parsePoint(`nothing here\n${'z'.repeat(300)}`, SCREEN);
    expect('error' in result && result.error).not.toContain('\n');
    expect('error' in result && result.error.length).toBeLessThan(140);
  });
});
