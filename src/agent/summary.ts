// One-line action summaries for UIs and the workflow's activity summaries: "left_click (500, 340)".
import { actionPoint } from '../actions/point';
import type { AgentAction } from '../actions/schemas';

function clip(text: string, max = 40): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

export function summarizeAction(action: AgentAction): string {
  const p = actionPoint(action);
  const where = p ? ` (${Math.round(p.x)}, ${Math.round(p.y)})` : '';
  switch (action.action) {
    case 'type':
      return `type "${clip(action.text)}"${where}`;
    case 'key':
      return `key ${action.keys.join('+')}`;
    case 'scroll':
    case 'hscroll':
      return `${action.action} ${action.pixels}`;
    case 'visit_url':
      return `visit_url ${clip(action.url, 60)}`;
    case 'web_search':
      return `web_search "${clip(action.query)}"`;
    case 'read_page_answer_question':
    case 'ask_user_question':
      return `${action.action} "${clip(action.question)}"`;
    case 'pause_and_memorize_fact':
      return `memorize "${clip(action.fact)}"`;
    case 'wait':
      return `wait ${action.time}s`;
    case 'terminate':
      return 'answer' in action ? `terminate "${clip(action.answer)}"` : `terminate ${action.status}`;
    default:
      return `${action.action}${where}`;
  }
}
