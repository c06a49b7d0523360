// The view's one-line texts that the HTML page, `cua show` and the console share: a tool's model call, a replay run.
import type { ToolSubCall } from '../trajectory/schema';
import type { ViewReplay } from './view';

/** `12,345` */
const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** One line about a model call the action's tool made: model, prompt size (and tokens, when known), duration. */
export function subCallLine(call: ToolSubCall): string {
  const tokens = call.messages[0]?.usage.prompt_tokens;
  const size = `${count(call.prompt_chars)} characters of prompt${tokens ? ` (${count(tokens)} tokens)` : ''}`;
  const page = call.page_chars !== undefined ? `, page text ${count(call.page_chars)} characters` : '';
  return `${call.model || 'model unknown'} · ${size}${page} · ${count(call.duration_ms)} ms`;
}

/**
 * A replay run's line, `replay of <task id>: N replayed, N healed, N decided`; a cached run's,
 * `cache <name>: N from the cache, N healed, N decided`.
 */
export function replaySummary(replay: ViewReplay): string {
  if (replay.cache !== undefined) {
    return `cache ${replay.cache}: ${replay.replayed} from the cache, ${replay.healed} healed, ${replay.decided} decided`;
  }
  return `replay of ${replay.of}: ${replay.replayed} replayed, ${replay.healed} healed, ${replay.decided} decided`;
}
