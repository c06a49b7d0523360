// What Anthropic's computer-use models cost, in US dollars per million tokens, for an endpoint with no `price` of its
// own: input, output, and cache reads. From Anthropic's pricing page and model overviews (platform.claude.com, read
// 2026-12); prices change, and the endpoint's `price` config always wins. Cache writes (1.25x input for 5 minutes)
// are counted as input: the usage we keep does not tell them apart.
import type { ModelPrice } from '../../model/client';

const FLAGSHIP_5_1 = { input: 10, output: 50, cachedInput: 0.25 };
const FLAGSHIP_5 = { input: 10, output: 50, cachedInput: 1 };
const OPUS = { input: 5, output: 25, cachedInput: 0.5 };
const OPUS_4 = { input: 15, output: 75, cachedInput: 1.5 };
const SONNET = { input: 3, output: 15, cachedInput: 0.3 };

/** Prices by model family and version (`opus 4.5`). */
const PRICES: Readonly<Record<string, ModelPrice>> = {
  'fable 5.1': FLAGSHIP_5_1,
  'mythos 5.1': FLAGSHIP_5_1,
  'fable 5': FLAGSHIP_5,
  'mythos 5': FLAGSHIP_5,
  // Opus 5.5: its cache-read price was not in the official pages read; cached tokens count as input.
  'opus 5.5': { input: 4, output: 20 },
  'opus 5': OPUS,
  'opus 4.8': OPUS,
  'opus 4.7': OPUS,
  'opus 4.6': OPUS,
  'opus 4.5': OPUS,
  'opus 4.1': OPUS_4,
  'opus 4': OPUS_4,
  'sonnet 5': { input: 2, output: 10, cachedInput: 0.2 },
  'sonnet 4.6': SONNET,
  'sonnet 4.5': SONNET,
  'sonnet 4': SONNET,
  'sonnet 3.7': SONNET,
  'haiku 4.5': { input: 1, output: 5, cachedInput: 0.1 },
};

/** A model name's family and version (`claude-opus-4-5-20251101` → `opus 4.5`; `claude-3-7-sonnet` → `sonnet 3.7`). */
function versionOf(model: string): string | undefined {
  const name = model.toLowerCase();
  const old = /claude-(\d)-(\d)-(sonnet|haiku|opus)/.exec(name);
  if (old) return `${old[3]} ${old[1]}.${old[2]}`;
  const m = /(opus|sonnet|haiku|fable|mythos)-(\d)(?:-(\d))?(?!\d)/.exec(name);
  if (!m) return undefined;
  return m[3] === undefined ? `${m[1]} ${m[2]}` : `${m[1]} ${m[2]}.${m[3]}`;
}

/** The documented price of a computer-use model by its name, or undefined for a name not in the table. */
export function anthropicPrice(model: string): ModelPrice | undefined {
  const version = versionOf(model);
  return version === undefined ? undefined : PRICES[version];
}
