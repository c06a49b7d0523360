// `cua signin save <task-id> NAME | list | rm NAME`: saved sign-ins in the run store (src/trajectory/signins.ts),
// encrypted with the payload codec's key when encryption is configured. `save` takes the cookies and storage of the
// task's last saved page; `list` shows names, hosts, when, from which task and sizes (never a cookie's value). Also
// `cua run --signin NAME [--signin-refresh]`'s check that the sign-in exists before the task starts.
import { ENVIRONMENT_NAME } from '../../src/contract/task';
import type { TaskInputArgs } from '../../src/contract/task';
import { loadConfig } from '../../src/runtime/config';
import type { Config } from '../../src/runtime/config';
import { signinStoreFor } from '../../src/runtime/signins';
import { isValidTaskId } from '../../src/trajectory/layout';
import { openRunStore } from '../../src/trajectory/open-store';
import { SIGNIN_NAME, SigninError, checkSigninName, taskPageStorage } from '../../src/trajectory/signins';
import type { SigninSummary } from '../../src/trajectory/signins';
import { parse, UsageError } from '../args';

export const SIGNIN_USAGE =
  'npx cua signin save <task-id> NAME | npx cua signin list | npx cua signin rm NAME   [--json] [--config FILE]';

const OPTIONS = {
  json: { type: 'boolean' },
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function signinCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, SIGNIN_USAGE);
  if (values.help) return (console.log(`usage: ${SIGNIN_USAGE}`), 0);
  const [verb, ...args] = positionals;
  const want = (n: number) => {
    if (args.length !== n)
      throw new UsageError(`cua signin ${verb}: expected ${n} argument(s)\nusage: ${SIGNIN_USAGE}`);
  };
  if (verb !== 'save' && verb !== 'list' && verb !== 'rm') {
    throw new UsageError(`cua signin: save, list or rm${verb ? `, not '${verb}'` : ''}\nusage: ${SIGNIN_USAGE}`);
  }
  want(verb === 'save' ? 2 : verb === 'rm' ? 1 : 0);
  const config = loadConfig({ file: values.config });
  const store = openRunStore(config);
  const signins = signinStoreFor(config, store);
  const json = !!values.json;
  const print = (text: string, data: unknown) => console.log(json ? JSON.stringify(data) : text);
  try {
    if (verb === 'list') {
      const rows = await signins.list();
      print(listText(rows), rows);
    } else if (verb === 'rm') {
      const name = checkSigninName(args[0] as string);
      if (!(await signins.remove(name))) throw new UsageError(`no saved sign-in named '${name}'`);
      print(`sign-in ${name} removed`, { name, removed: true });
    } else {
      const [taskId, name] = args as [string, string];
      checkSigninName(name);
      if (!isValidTaskId(taskId)) throw new UsageError(`'${taskId}' is not a task id`);
      const page = await taskPageStorage(store, taskId);
      if (!page) {
        throw new UsageError(
          `task ${taskId} has no saved page state (a desktop task, a task that never opened a page, or no such task)`,
        );
      }
      const saved = await signins.save(name, page.storage, taskId);
      print(`sign-in ${name} saved from task ${taskId}: ${hostsText(saved)} (${saved.bytes} bytes)`, saved);
    }
  } catch (err) {
    if (err instanceof SigninError) throw new UsageError(err.message);
    throw err;
  }
  return 0;
}

const hostsText = (s: SigninSummary) => (s.hosts.length > 0 ? s.hosts.join(', ') : 'no hosts');

function listText(rows: SigninSummary[]): string {
  if (rows.length === 0) return 'no saved sign-ins (save one with: npx cua signin save <task-id> NAME)';
  const width = Math.max(4, ...rows.map((r) => r.name.length));
  const head = `${'NAME'.padEnd(width)}  SAVED AT              FROM TASK                 SIZE     HOSTS`;
  const lines = rows.map(
    (r) =>
      `${r.name.padEnd(width)}  ${r.savedAt.slice(0, 19).replace('T', ' ')}   ${r.fromTask.padEnd(24)}  ` +
      `${`${r.bytes} B`.padStart(7)}  ${hostsText(r)}${r.encrypted ? '' : '  (not encrypted)'}`,
  );
  return [head, ...lines].join('\n');
}

/**
 * `cua run --signin NAME [--signin-refresh]`: the task fields, with the sign-in checked in the run store first when
 * this machine can read it (a store it cannot reach is left to the worker, which fails the task at its start).
 */
export async function signinFlags(
  config: Config,
  name: string | undefined,
  refresh: boolean | undefined,
  env: string | undefined,
): Promise<Pick<TaskInputArgs, 'signin' | 'signinRefresh'>> {
  if (name === undefined) {
    if (refresh) throw new UsageError('--signin-refresh needs --signin NAME');
    return {};
  }
  if (!SIGNIN_NAME.test(name)) {
    throw new UsageError(`--signin: lower-case letters, digits, dot, dash, underscore (max 64), got '${name}'`);
  }
  if (env !== undefined && env !== 'browser' && ENVIRONMENT_NAME.test(env)) {
    throw new UsageError('--signin is for browser tasks (a saved sign-in is a browser state)');
  }
  let found: boolean | undefined;
  try {
    found = (await signinStoreFor(config, openRunStore(config)).load(name)) !== undefined;
  } catch (err) {
    if (err instanceof SigninError) throw new UsageError(`--signin: ${err.message}`);
    found = undefined; // the store cannot be read from here
  }
  if (found === false) throw new UsageError(`--signin: no saved sign-in named '${name}' (see npx cua signin list)`);
  return { signin: name, ...(refresh ? { signinRefresh: true } : {}) };
}
