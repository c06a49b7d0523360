// Which of a session's requests an approval rule holds. The journal (request-journal.ts) routes every request of a
// session with rules and asks here; holds, decisions and the sends an approval was used for are lines of the run's
// journal (approval-lines.ts reads them), so every worker reads the same record. Pure.
import { matchingRule } from '../contract/approvals';
import type { ApprovalRule } from '../contract/approvals';

/** Resource types a page sends on purpose: held by a matching rule whatever their method. */
const SENT_TYPES = new Set(['document', 'xhr', 'fetch', 'ping', 'eventsource']);

/**
 * Whether a request of this method and resource type is one a rule may hold: a navigation or form post, a
 * fetch/XHR, a beacon or an event stream; any other resource with a method other than GET or HEAD. Subresources a
 * page loads with GET (images, scripts, styles, fonts, media) are not held, and neither is a CORS preflight.
 */
export function isGateable(method: string, resourceType: string): boolean {
  const verb = method.toUpperCase();
  if (verb === 'OPTIONS') return false;
  return SENT_TYPES.has(resourceType) || (verb !== 'GET' && verb !== 'HEAD');
}

/** The rule that holds this request, if any. */
export function holdingRule(
  rules: readonly ApprovalRule[],
  method: string,
  url: string,
  resourceType: string,
): ApprovalRule | undefined {
  if (rules.length === 0 || !isGateable(method, resourceType)) return undefined;
  return matchingRule(rules, method, url);
}
