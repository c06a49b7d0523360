// The actions of ours a provider's computer-use output becomes: the Fara-1.5 action set less what only Fara has (its
// page question, memorised facts and web search). Each provider family allows these, less what its provider cannot
// express.
export const PROVIDER_FAMILY_ACTIONS = [
  'key',
  'type',
  'mouse_move',
  'left_click',
  'left_click_drag',
  'right_click',
  'double_click',
  'triple_click',
  'scroll',
  'hscroll',
  'visit_url',
  'history_back',
  'wait',
  'ask_user_question',
  'terminate',
] as const;
