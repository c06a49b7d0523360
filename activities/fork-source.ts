// What a fork (`cua fork <id> --step N`, issue 27) takes from its source run, read from the run store: the events of
// steps 0…N and where the page (browser: step N's checkpoint) or the home (desktop: the archive as of step N) is saved;
// or, in one line, why the run cannot be forked at that step. The fork's start (fork.ts) and the CLI's check before
// it starts a fork both read it so.
import { loadEvents, loadRunState } from '../src/trajectory/reader';
import { eventId, parseEventId } from '../src/trajectory/ids';
import { TASK_FILE } from '../src/trajectory/layout';
import type { Event } from '../src/trajectory/schema';
import type { RunStore } from '../src/trajectory/store';
import { stepCheckpointFile } from './environments/browser-state';
import { homeArchiveAt } from './environments/desktop-home';
import type { HomeArchive } from './environments/desktop-home';

/** The saved page a fork opens in: a browser step's checkpoint file, or a desktop's home archive (run-relative). */
export type ForkPage = { environment: 'browser'; checkpoint: string } | { environment: 'desktop'; home: HomeArchive };

/** The source run's part a fork keeps: the events of steps 0…step in stream order, and the page to open in. */
export interface ForkSource {
  taskId: string;
  step: number;
  events: Event[];
  page: ForkPage;
}

/** The source run's events up to `step` and its saved page there; `refused`: why not, in one line. */
export async function readForkSource(
  store: RunStore,
  taskId: string,
  step: number,
): Promise<ForkSource | { refused: string }> {
  if (!(await store.exists(`${taskId}/${TASK_FILE}`))) {
    return { refused: `no run folder '${taskId}' in the run store (${store.describe(taskId)})` };
  }
  const events = await loadEvents(store, taskId);
  const stepOf = (e: Event) => parseEventId(e.id)?.step;
  const actions = events.filter((e) => e.type === 'action' && stepOf(e) === step);
  if (actions.length === 0) {
    const last = Math.max(0, ...events.filter((e) => e.type === 'action').map((e) => stepOf(e) ?? 0));
    return { refused: `run ${taskId} has no step ${step} (its last step is ${last})` };
  }
  const generation = Math.max(...actions.map((e) => parseEventId(e.id)?.generation ?? 0));
  const post = eventId({ step, kind: 'post', generation });
  if (!events.some((e) => e.id === post)) {
    return { refused: `step ${step} of run ${taskId} did not finish (no page was recorded after its action)` };
  }
  // A step that ended the task or asked the user did nothing to the page: no checkpoint was taken after it.
  const final = actions.find((e) => parseEventId(e.id)?.generation === generation);
  const name = final?.type === 'action' ? final.action_name : '';
  if (['terminate', 'stop', 'ask_user_question', 'ask_user'].includes(name)) {
    const what = name === 'terminate' || name === 'stop' ? 'ended the task' : 'asked the user';
    return {
      refused: `step ${step} of run ${taskId} ${what} (${name}); no page was saved after it: fork at step ${step - 1} to decide it again`,
    };
  }
  const page = await savedPage(store, taskId, step);
  if ('refused' in page) return page;
  const kept = events.filter((e) => {
    const at = stepOf(e);
    return at !== undefined && at <= step;
  });
  return { taskId, step, events: kept, page };
}

/** Where the run saved its page (or home) as `step` left it. */
async function savedPage(store: RunStore, taskId: string, step: number): Promise<ForkPage | { refused: string }> {
  const input = (await loadRunState(store, taskId)).input as { environment?: unknown } | undefined;
  const environment = input?.environment ?? 'browser';
  if (environment === 'desktop') {
    const home = await homeArchiveAt(store, taskId, step);
    if (home) return { environment, home };
    return {
      refused: `run ${taskId} has no home archive at or before step ${step}: its home cannot be restored there`,
    };
  }
  if (environment !== 'browser') {
    return { refused: `run ${taskId} is a ${String(environment)} run: only browser and desktop runs can be forked` };
  }
  const checkpoint = stepCheckpointFile(step);
  if (await store.exists(`${taskId}/${checkpoint}`)) return { environment, checkpoint };
  return {
    refused: `run ${taskId} has no page checkpoint at step ${step} (${checkpoint}): its page cannot be restored`,
  };
}
