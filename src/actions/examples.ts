// One well-formed sample of every action per Fara family, typed so that adding an action without a sample fails to
// compile. Used by tests and by the scripted model server to exercise the whole action space.
import type { FaraName } from './fara';
import type { AgentAction, Fara15Action, Fara7bAction } from './schemas';

type OnePerAction<A extends AgentAction> = { [N in A['action']]: Extract<A, { action: N }> };

const FARA15_EXAMPLES: OnePerAction<Fara15Action> = {
  key: { action: 'key', keys: ['Control', 'a'] },
  type: { action: 'type', text: 'cheap flights to Lisbon', press_enter: true },
  mouse_move: { action: 'mouse_move', coordinate: [120, 640] },
  left_click: { action: 'left_click', coordinate: [500, 340] },
  left_click_drag: { action: 'left_click_drag', coordinate: [880, 410] },
  right_click: { action: 'right_click', coordinate: [250, 75] },
  double_click: { action: 'double_click', coordinate: [333, 667] },
  triple_click: { action: 'triple_click', coordinate: [512, 128] },
  scroll: { action: 'scroll', pixels: -500 },
  hscroll: { action: 'hscroll', pixels: 200 },
  visit_url: { action: 'visit_url', url: 'https://example.org/a?b=c' },
  history_back: { action: 'history_back' },
  web_search: { action: 'web_search', query: 'weather in Lisbon' },
  read_page_answer_question: { action: 'read_page_answer_question', question: 'What is the total price?' },
  pause_and_memorize_fact: { action: 'pause_and_memorize_fact', fact: 'The first hotel costs €120 a night.' },
  ask_user_question: { action: 'ask_user_question', question: 'Which date should I book?' },
  wait: { action: 'wait', time: 2 },
  terminate: { action: 'terminate', answer: 'The cheapest flight is "TP 1351" at 09:05.' },
};

const FARA7B_EXAMPLES: OnePerAction<Fara7bAction> = {
  key: { action: 'key', keys: ['Enter'] },
  type: { action: 'type', text: 'hello', coordinate: [700, 120], press_enter: false, delete_existing_text: true },
  mouse_move: { action: 'mouse_move', coordinate: [10, 20] },
  left_click: { action: 'left_click', coordinate: [1427, 895] },
  scroll: { action: 'scroll', pixels: 300 },
  visit_url: { action: 'visit_url', url: 'bing.com' },
  web_search: { action: 'web_search', query: 'Temporal workflows' },
  history_back: { action: 'history_back' },
  pause_and_memorize_fact: { action: 'pause_and_memorize_fact', fact: 'Order number 4411' },
  wait: { action: 'wait', time: 0.5 },
  terminate: { action: 'terminate', status: 'success' },
};

/** Sample actions of a Fara family, one per action, in no particular order. */
export function exampleActions(family: 'fara-1.5'): Fara15Action[];
export function exampleActions(family: 'fara-7b'): Fara7bAction[];
export function exampleActions(family: FaraName): AgentAction[];
export function exampleActions(family: FaraName): AgentAction[] {
  return Object.values(family === 'fara-1.5' ? FARA15_EXAMPLES : FARA7B_EXAMPLES);
}
