// The schedules page's "New schedule" form: a name, the task each run does (built exactly as the start form builds
// one, through start.ts's taskFromForm and client/new-task.ts), when it runs (a cron expression in a time zone, or an
// interval), the overlap policy and the monitor's condition. Everything that can be checked before Temporal is
// checked as `cua schedule create` checks it (the workers' URL policy too), and a refusal is InvalidScheduleError,
// one line, shown in the form.
import { DEFAULT_URL_POLICY } from '../src/contract/url-policy';
import type { UrlPolicy } from '../src/contract/url-policy';
import { notifyWhenOf } from '../src/contract/condition-logic';
import { escapeHtml } from '../src/viewer/markup';
import { InvalidScheduleError, parseSchedule } from '../client/client';
import type { AgentClient, NewTask, ScheduleOptionsIn } from '../client/client';
import { OVERLAP_POLICIES, scheduleTaskError } from '../client/schedules';
import type { OverlapPolicy } from '../client/schedules';
import { endpointOptionsHtml, signinFieldsHtml } from './forms';
import { taskFromForm } from './start';
import type { StartForm } from './start';

/** The form's fields as posted (JSON): the start form's task fields and the schedule's own; others are ignored. */
export interface ScheduleForm extends StartForm {
  name?: unknown;
  cron?: unknown;
  timezone?: unknown;
  every?: unknown;
  /** One of OVERLAP_POLICIES ('' or absent: skip). */
  overlap?: unknown;
  /** `changed`, an expression over the output, or a JSON-logic object's text ('' or absent: no monitor). */
  notifyWhen?: unknown;
}

/** What the console knows that the form's checks need. */
export interface ScheduleFormContext {
  /** The config's model endpoint names (empty: the workers' own `default`). */
  endpoints: readonly string[];
  /** The family each endpoint declares. */
  families?: Readonly<Record<string, string>>;
  /** The saved sign-ins' names (null: the store cannot be read here, and a worker checks the name). */
  signins?: () => Promise<readonly string[] | null>;
  /** The workers' URL policy, which each run's start URL must pass (absent: the default policy). */
  urlPolicy?: UrlPolicy;
}

export interface ScheduleOfForm {
  name: string;
  task: Omit<NewTask, 'id'>;
  opts: ScheduleOptionsIn;
}

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/** The schedule's timing from the form: a cron expression (in a time zone) or an interval, exactly one. */
function timingOf(form: ScheduleForm): Pick<ScheduleOptionsIn, 'cron' | 'every' | 'timezone'> {
  const [cron, every, timezone] = [text(form.cron), text(form.every), text(form.timezone)];
  if (cron && every) throw new InvalidScheduleError('when', 'give a cron expression or an interval (every), not both');
  if (!cron && !every) {
    throw new InvalidScheduleError('when', 'give a cron expression (e.g. 0 9 * * 1-5) or an interval (every, e.g. 6h)');
  }
  if (every && timezone) {
    throw new InvalidScheduleError('timezone', 'is for a cron expression; an interval is the same everywhere');
  }
  return cron ? { cron, ...(timezone ? { timezone } : {}) } : { every };
}

/** The form's overlap policy (default skip), or InvalidScheduleError. */
function overlapOf(form: ScheduleForm): OverlapPolicy {
  const overlap = text(form.overlap) || 'skip';
  if (!OVERLAP_POLICIES.includes(overlap)) {
    throw new InvalidScheduleError('overlap', `one of ${OVERLAP_POLICIES.join(', ')}`);
  }
  return overlap as OverlapPolicy;
}

/** The monitor's condition as `--notify-when` reads it (none when empty), or InvalidScheduleError. */
function notifyWhenOfForm(form: ScheduleForm): Pick<ScheduleOptionsIn, 'notifyWhen'> {
  const when = text(form.notifyWhen);
  if (!when) return {};
  try {
    return { notifyWhen: notifyWhenOf(when) };
  } catch (err) {
    throw new InvalidScheduleError('notifyWhen', (err as Error).message);
  }
}

/**
 * The schedule the form describes, checked as far as it can be before Temporal: its name, timing, overlap and
 * condition, and each run's task (as the start form builds it, and under the workers' URL policy). InvalidScheduleError,
 * one line.
 */
export async function scheduleOfForm(form: ScheduleForm, ctx: ScheduleFormContext): Promise<ScheduleOfForm> {
  const name = text(form.name);
  const opts: ScheduleOptionsIn = { ...timingOf(form), overlap: overlapOf(form), ...notifyWhenOfForm(form) };
  let task: Omit<NewTask, 'id'>;
  try {
    task = await taskFromForm(ctx.endpoints, form, ctx.families, ctx.signins);
  } catch (err) {
    throw scheduleTaskError(err);
  }
  parseSchedule(name, task, opts, ctx.urlPolicy ?? DEFAULT_URL_POLICY);
  return { name, task, opts };
}

/** Creates the schedule the form describes; a refusal (also a name taken) is the client's one-line error. */
export async function createFromForm(
  agent: Pick<AgentClient, 'createSchedule'>,
  form: ScheduleForm,
  ctx: ScheduleFormContext,
): Promise<{ name: string }> {
  const { name, task, opts } = await scheduleOfForm(form, ctx);
  await agent.createSchedule(name, task, opts);
  return { name };
}

/** The form's HTML on the schedules page; `signins` as the start form's (null: no sign-in select). */
export function scheduleFormHtml(endpoints: readonly string[], signins: readonly string[] | null): string {
  const overlaps = OVERLAP_POLICIES.map((p) => `<option value="${p}">${p.replace(/_/g, ' ')}</option>`).join('');
  const schema =
    "Output schema (optional): a JSON Schema each run's output must match, e.g. " +
    escapeHtml('{"type":"object","properties":{"price":{"type":"number"}}}');
  return `<details id="schedule-box" class="start"><summary>New schedule</summary>
<form id="schedule-form" class="start-form" novalidate>
<div class="start-row"><label>name <input id="sched-name" name="name" autocomplete="off" size="20" placeholder="harbor-price"></label></div>
<textarea id="sched-instruction" name="instruction" rows="2" placeholder="What should each run do?"></textarea>
<div class="start-row">
<label>start URL <input id="sched-url" name="startUrl" autocomplete="off" placeholder="https://…"></label>
<label>model <select id="sched-endpoint" name="endpoint">${endpointOptionsHtml(endpoints)}</select></label>
<label>max steps <input id="sched-steps" name="maxSteps" inputmode="numeric" size="5" placeholder="30"></label>
${signinFieldsHtml(signins, 'sched-signin', false)}</div>
<div class="start-row">
<label>cron <input id="sched-cron" name="cron" autocomplete="off" size="14" placeholder="0 9 * * 1-5"></label>
<label>time zone <input id="sched-timezone" name="timezone" autocomplete="off" size="14" placeholder="UTC"></label>
<span>or</span><label>every <input id="sched-every" name="every" autocomplete="off" size="6" placeholder="6h"></label>
<label>overlap <select id="sched-overlap" name="overlap">${overlaps}</select></label>
<label>notify when <input id="sched-notify" name="notifyWhen" autocomplete="off" size="28" placeholder="changed, output.price &lt; 100, or JSON logic"></label>
<button id="sched-send" type="submit">Create</button>
</div>
<textarea id="sched-output-schema" name="outputSchema" rows="2" spellcheck="false" placeholder="${schema}"></textarea>
</form>
<p id="sched-error" class="error" role="alert"></p></details>`;
}
