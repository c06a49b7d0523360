// What OpenAI's computer-use models cost, in US dollars per million tokens (standard processing, context under 270K),
// for an endpoint with no `price` of its own in the config. Sources (June 2026, both quoting OpenAI's pricing page):
// https://benchlm.ai/blog/posts/openai-api-pricing and https://www.morphllm.com/openai-api-pricing. The preview model
// (computer-use-preview) has no price here: no stored source gave one; set `models.<name>.price` for it.
import type { ModelPrice } from '../../model/client';

/** Model name prefix → price; the longest matching prefix wins (gpt-5.4-mini before gpt-5.4). */
export const OPENAI_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-5.5': { input: 5, cachedInput: 0.5, output: 30 },
  'gpt-5.5-pro': { input: 30, output: 180 },
  'gpt-5.4-pro': { input: 30, output: 180 },
  'gpt-5.4': { input: 2.5, cachedInput: 0.25, output: 15 },
  'gpt-5.4-mini': { input: 0.75, cachedInput: 0.075, output: 4.5 },
  'gpt-5.4-nano': { input: 0.2, cachedInput: 0.02, output: 1.25 },
};

/** The price of a model by its name (a dated snapshot such as gpt-5.4-2026-03-05 included), or undefined. */
export function openAiPriceOf(model: string): ModelPrice | undefined {
  const name = model.toLowerCase();
  const prefix = Object.keys(OPENAI_PRICES)
    .filter((p) => name === p || name.startsWith(`${p}-`))
    .sort((a, b) => b.length - a.length)[0];
  return prefix === undefined ? undefined : OPENAI_PRICES[prefix];
}
