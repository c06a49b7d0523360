// The console's "New schedule" form (console/schedule-form.ts): its fields become the task each run does, built as the
// start form builds one (client/new-task.ts), and the schedule's options; each refusal is one line naming the field,
// before anything reaches Temporal; a name taken is the client's own refusal, passed through.
import { describe, expect, it } from 'vitest';
import { InvalidScheduleError, ScheduleAlreadyExistsError } from '../../client/client';
import type { AgentClient } from '../../client/client';
import { newTaskOf } from '../../client/new-task';
import { createFromForm, scheduleFormHtml, scheduleOfForm } from '../../console/schedule-form';
import type { ScheduleForm, ScheduleFormContext } from '../../console/schedule-form';
import { DEFAULT_URL_POLICY } from '../../src/contract/url-policy';

const CTX: ScheduleFormContext = {
  endpoints: ['scripted', 'fara'],
  families: { fara: 'fara-1.5' },
  signins: async () => ['shop'],
};
const FORM: ScheduleForm = {
  name: 'harbor-price',
  instruction: '  Read the nightly price of Harbor View ',
  startUrl: 'https://hotels.example/harbor-view',
  endpoint: 'scripted',
  maxSteps: '10',
  cron: '0 9 * * 1-5',
  timezone: 'Europe/Lisbon',
};

describe('the new schedule form → the task and the options', () => {
  it('builds each run’s task as the start form does, with skip as the default overlap and no monitor', async () => {
    const { name, task, opts } = await scheduleOfForm(FORM, CTX);
    expect(name).toBe('harbor-price');
    expect(task).toEqual(
      newTaskOf({
        instruction: 'Read the nightly price of Harbor View',
        startUrl: 'https://hotels.example/harbor-view',
        maxSteps: 10,
        endpoint: 'scripted',
      }),
    );
    expect(opts).toEqual({ cron: '0 9 * * 1-5', timezone: 'Europe/Lisbon', overlap: 'skip' });
  });

  it('takes an interval, the overlap, a condition, a sign-in, an output schema and the endpoint’s family', async () => {
    const schema = { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] };
    const { task, opts } = await scheduleOfForm(
      {
        ...FORM,
        cron: '',
        timezone: '',
        every: '6h',
        overlap: 'buffer_one',
        notifyWhen: ' output.price < 100 ',
        endpoint: 'fara',
        signin: 'shop',
        outputSchema: JSON.stringify(schema),
      },
      CTX,
    );
    expect(opts).toEqual({ every: '6h', overlap: 'buffer_one', notifyWhen: 'output.price < 100' });
    expect(task).toMatchObject({
      outputSchema: schema,
      signin: 'shop',
      family: 'fara-1.5',
      model: { endpoint: 'fara' },
    });
  });

  it('reads `changed` and a JSON-logic object as the command line does', async () => {
    const changed = await scheduleOfForm({ ...FORM, notifyWhen: 'changed' }, CTX);
    expect(changed.opts.notifyWhen).toBe('changed');
    const logic = await scheduleOfForm({ ...FORM, notifyWhen: '{"<": [{"var": "output.price"}, 100]}' }, CTX);
    expect(logic.opts.notifyWhen).toEqual({ '<': [{ var: 'output.price' }, 100] });
  });

  const refusals: [string, ScheduleForm, RegExp][] = [
    ['a bad cron', { cron: '0 9 * *' }, /^invalid schedule: cron: '0 9 \* \*' has 4 field\(s\)/],
    ['a cron field out of range', { cron: '0 25 * * *' }, /^invalid schedule: cron hour: 25 is outside 0–23$/],
    ['an unknown time zone', { timezone: 'Europe/Atlantis' }, /unknown time zone 'Europe\/Atlantis'/],
    ['a bad interval', { cron: '', timezone: '', every: 'often' }, /^invalid schedule: --every 'often' is no duration/],
    ['both timings', { every: '6h' }, /^invalid schedule: when: give a cron expression or an interval/],
    ['no timing', { cron: '', timezone: '' }, /^invalid schedule: when: give a cron expression \(e\.g\./],
    ['a time zone with an interval', { cron: '', every: '6h' }, /^invalid schedule: timezone: is for a cron/],
    ['an unknown overlap', { overlap: 'sometimes' }, /^invalid schedule: overlap: one of skip, buffer_one/],
    ['a URL the policy refuses', { startUrl: 'file:///etc/passwd' }, /^invalid schedule: startUrl: blocked by the URL/],
    ['an invalid URL', { startUrl: 'not a url' }, /^invalid schedule: startUrl: /],
    ['a bad output schema', { outputSchema: '{"type": "object"' }, /^invalid schedule: outputSchema: /],
    ['a schema that is no schema', { outputSchema: '{"type": "thing"}' }, /^invalid schedule: outputSchema: /],
    ['a bad condition', { notifyWhen: 'price < 100' }, /^invalid schedule: notifyWhen: unknown name 'price'/],
    ['bad JSON logic', { notifyWhen: '{"<": [' }, /^invalid schedule: notifyWhen: not valid JSON/],
    ['an unknown endpoint', { endpoint: 'gpt-nope' }, /^invalid schedule: model: no endpoint named 'gpt-nope'/],
    ['a sign-in not saved', { signin: 'bank' }, /^invalid schedule: signin: no saved sign-in named 'bank'/],
    ['steps that are no number', { maxSteps: 'ten' }, /^invalid schedule: maxSteps: must be a whole number/],
    ['an empty instruction', { instruction: ' ' }, /^invalid schedule: instruction: /],
    ['no name', { name: '' }, /^invalid schedule: name: letters, digits/],
    ['a name with a slash', { name: 'a/b' }, /^invalid schedule: name: letters, digits/],
  ];
  it.each(refusals)('refuses %s in one line', async (_what, change, message) => {
    const refusal = await scheduleOfForm({ ...FORM, ...change }, CTX).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(InvalidScheduleError);
    expect((refusal as Error).message).toMatch(message);
    expect((refusal as Error).message).not.toContain('\n');
  });

  it('checks the start URL against the workers’ own URL policy when the console has it', async () => {
    const policy = { ...DEFAULT_URL_POLICY, denyHosts: ['hotels.example'] };
    const refusal = await scheduleOfForm(FORM, { ...CTX, urlPolicy: policy }).catch((e: unknown) => e);
    expect((refusal as Error).message).toMatch(/^invalid schedule: startUrl: blocked by the URL policy: /);
  });
});

describe('creating from the form', () => {
  it('calls createSchedule with the mapping, and passes its refusal (a name taken) through', async () => {
    const calls: unknown[][] = [];
    const agent: Pick<AgentClient, 'createSchedule'> = {
      createSchedule: async (...args) => {
        calls.push(args);
        if (calls.length > 1) throw new ScheduleAlreadyExistsError(args[0]);
        return {} as Awaited<ReturnType<AgentClient['createSchedule']>>;
      },
    };
    expect(await createFromForm(agent, FORM, CTX)).toEqual({ name: 'harbor-price' });
    const { name, task, opts } = await scheduleOfForm(FORM, CTX);
    expect(calls[0]).toEqual([name, task, opts]);
    await expect(createFromForm(agent, FORM, CTX)).rejects.toThrow(
      /^a schedule named harbor-price already exists; delete it first or choose another name$/,
    );
    // A refused form never reaches the client.
    await expect(createFromForm(agent, { ...FORM, cron: 'nope' }, CTX)).rejects.toThrow(InvalidScheduleError);
    expect(calls).toHaveLength(2);
  });
});

describe('the form’s HTML', () => {
  it('offers the endpoints, skip first among the overlap policies, and the saved sign-ins without a refresh box', () => {
    const html = scheduleFormHtml(['scripted', 'a<b'], ['shop']);
    expect(html).toContain('<option value="scripted">scripted</option><option value="a&lt;b">a&lt;b</option>');
    expect(html).toMatch(/<select id="sched-overlap" name="overlap"><option value="skip">skip<\/option>/);
    expect(html).toContain('<select id="sched-signin" name="signin"><option value="">none</option>');
    expect(html).not.toContain('signinRefresh');
    expect(scheduleFormHtml([], null)).not.toContain('sched-signin');
  });
});
