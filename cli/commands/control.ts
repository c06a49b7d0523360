// `cua pause | resume | say | continue | takeover | handback`: a person's controls over a task (client/control.ts). Each
// prints one line saying what happened; a refusal (a task that is not running, waits for a reply, is not paused …) is
// the task's own one-line reason.
import { loadConfig } from '../../src/runtime/config';
import { agentClientFor } from '../../client/client';
import { one, parse, UsageError } from '../args';

const common = {
  json: { type: 'boolean' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The id and the text after it (`cua say <id> words …`), or a usage error naming what is missing. */
function idAndText(positionals: readonly string[], what: string, usage: string): { id: string; text: string } {
  const [id, ...rest] = positionals;
  const text = rest.join(' ').trim();
  if (!id || !text) throw new UsageError(`need a task id and ${what}\nusage: ${usage}`);
  return { id, text };
}

export const PAUSE_USAGE = 'npx cua pause <id> [--json] [--config FILE]';
export async function pauseCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, common, PAUSE_USAGE);
  if (values.help) return (console.log(`usage: ${PAUSE_USAGE}`), 0);
  const id = one(positionals, 'task id', PAUSE_USAGE);
  const agent = await agentClientFor(loadConfig({ file: values.config }));
  if (!values.json) console.log(`pausing ${id} after the step under way …`);
  const res = await agent.pause(id);
  const line =
    res.status === 'paused'
      ? `${id} is paused after step ${res.step}; resume it with: npx cua resume ${id}`
      : `${id} did not pause: it is ${res.status} (step ${res.step})`;
  console.log(values.json ? JSON.stringify({ id, ...res }) : line);
  return 0;
}

export const RESUME_USAGE = 'npx cua resume <id> [--json] [--config FILE]';
export async function resumeCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, common, RESUME_USAGE);
  if (values.help) return (console.log(`usage: ${RESUME_USAGE}`), 0);
  const id = one(positionals, 'task id', RESUME_USAGE);
  const agent = await agentClientFor(loadConfig({ file: values.config }));
  const res = await agent.resume(id);
  console.log(values.json ? JSON.stringify({ id, ...res }) : `${id} resumes after step ${res.step}`);
  return 0;
}

export const SAY_USAGE = 'npx cua say <id> "<message>" [--json] [--config FILE]';
export async function sayCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, common, SAY_USAGE);
  if (values.help) return (console.log(`usage: ${SAY_USAGE}`), 0);
  const { id, text } = idAndText(positionals, 'a message', SAY_USAGE);
  const agent = await agentClientFor(loadConfig({ file: values.config }));
  const res = await agent.say(id, text);
  console.log(
    values.json
      ? JSON.stringify({ id, ...res })
      : `message delivered to ${id}; the model reads it at step ${res.step + 1}`,
  );
  return 0;
}

export const CONTINUE_USAGE = 'npx cua continue <id> "<next task>" [--max-steps N] [--detach] [--json] [--config FILE]';
/** `--detach` is accepted like every command that starts a task, and changes nothing: continue returns at once. */
export async function continueCommand(argv: readonly string[]): Promise<number> {
  const options = { ...common, 'max-steps': { type: 'string' }, detach: { type: 'boolean' } } as const;
  const { values, positionals } = parse(argv, options, CONTINUE_USAGE);
  if (values.help) return (console.log(`usage: ${CONTINUE_USAGE}`), 0);
  const { id, text } = idAndText(positionals, 'the next task', CONTINUE_USAGE);
  const maxSteps = values['max-steps'] === undefined ? undefined : Number(values['max-steps']);
  if (maxSteps !== undefined && !(Number.isInteger(maxSteps) && maxSteps >= 1)) {
    throw new UsageError(`--max-steps must be a whole number ≥ 1; got '${values['max-steps']}'`);
  }
  const agent = await agentClientFor(loadConfig({ file: values.config }));
  const res = await agent.continue(id, text, maxSteps === undefined ? {} : { maxSteps });
  console.log(
    values.json
      ? JSON.stringify({ id, followUp: res.input.followUp })
      : `${id} goes on with the follow-up (its page and history as it left them); follow it with: npx cua status ${id}`,
  );
  return 0;
}

export const TAKEOVER_USAGE = 'npx cua takeover <id> [--json] [--config FILE]';
export async function takeoverCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, common, TAKEOVER_USAGE);
  if (values.help) return (console.log(`usage: ${TAKEOVER_USAGE}`), 0);
  const id = one(positionals, 'task id', TAKEOVER_USAGE);
  const agent = await agentClientFor(loadConfig({ file: values.config }));
  if (!values.json) console.log(`taking over ${id} after the step under way …`);
  const lease = await agent.takeover(id);
  if (values.json) {
    console.log(JSON.stringify({ id, ...lease }));
    return 0;
  }
  console.log(`${id} is yours (lease ${lease.leaseId}): watch and drive the browser at`);
  console.log(`  ${lease.url}`);
  if (lease.cdpUrl) console.log(`  DevTools (operator only; chromium.connectOverCDP): ${lease.cdpUrl}`);
  console.log(`hand it back with: npx cua handback ${id} "<what you did>"`);
  return 0;
}

export const HANDBACK_USAGE = 'npx cua handback <id> ["<note>"] [--lease ID] [--json] [--config FILE]';
export async function handbackCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...common, lease: { type: 'string' } }, HANDBACK_USAGE);
  if (values.help) return (console.log(`usage: ${HANDBACK_USAGE}`), 0);
  const [id, ...rest] = positionals;
  if (!id) throw new UsageError(`need a task id\nusage: ${HANDBACK_USAGE}`);
  const note = rest.join(' ').trim();
  const agent = await agentClientFor(loadConfig({ file: values.config }));
  const res = await agent.handback(id, {
    ...(note ? { note } : {}),
    ...(values.lease ? { leaseId: values.lease } : {}),
  });
  console.log(
    values.json ? JSON.stringify({ id, ...res }) : `${id} handed back; the agent goes on from step ${res.step + 1}`,
  );
  return 0;
}
