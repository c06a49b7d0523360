// Why a task ended, as a machine-readable value beside the human text: tools built on top (an evaluation harness)
// must tell an agent failure (it gave up, ran out of steps, kept replying nonsense) from an environment failure (the
// model endpoint, the browser) without parsing messages. Pure, and imports nothing: the failure types
// (src/agent/failure-types.ts) name the end reason each stands for.
export const END_REASONS = [
  /** The model ended the task (terminate). */
  'complete',
  /** The step budget was used up. */
  'max_rounds',
  /** Too many model outputs in a row were no valid action (a wire name: recorded in run folders and histories). */
  'invalid_replies',
  /** The model endpoint refused the request, or stayed unreachable through every retry. */
  'model_endpoint',
  /** The browser could not be opened, lost its page, or the start page could not load. */
  'browser',
  /** The desktop sandbox could not be started or was lost beyond recovery. */
  'desktop',
  /** A captcha was not solved in time. */
  'captcha',
  /** Nobody replied to the agent's question before the ask timeout. */
  'ask_timeout',
  /** A strict replay (`cua replay --strict`) found the page no longer the one recorded. */
  'replay_diverged',
  /** A budget (cost, tokens, working minutes) was reached and the user replied `stop` (src/agent/budget.ts). */
  'budget',
  /** The agent repeated an action on an unchanged page and the user replied `stop`. */
  'loop',
  /** Someone cancelled the task. */
  'cancelled',
  /** The task's input (or a file it names, e.g. a prompt file) was not usable. */
  'input',
  /** The run folder could not be read or written. */
  'run_folder',
  /** Anything else: a bug or an unexpected failure; the text says what. */
  'internal',
] as const;
export type EndReason = (typeof END_REASONS)[number];
