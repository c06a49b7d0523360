// The `cua` command line: a table from command words to small command modules; errors in one line.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/infra/paths';
import { InvalidTaskInputError } from '../client/errors';
import { UsageError } from './args';
import { runCommand, RUN_USAGE } from './commands/run';
import { scheduleCommand, SCHEDULE_USAGE } from './commands/schedule';
import {
  cancelCommand,
  CANCEL_USAGE,
  listCommand,
  LIST_USAGE,
  replyCommand,
  REPLY_USAGE,
  statusCommand,
  STATUS_USAGE,
} from './commands/tasks';
import { showCommand, SHOW_USAGE } from './commands/show';
import { signinCommand, SIGNIN_USAGE } from './commands/signin';
import { forkCommand, FORK_USAGE } from './commands/fork';
import { replayCommand, REPLAY_USAGE } from './commands/replay';
import { adoptCommand, ADOPT_USAGE } from './commands/adopt';
import { viewCommand, VIEW_USAGE } from './commands/view';
import { demoCommand, DEMO_USAGE } from './commands/demo';
import { consoleCommand, CONSOLE_USAGE } from './commands/console';
import { mcpCommand, MCP_USAGE } from './commands/mcp';
import { codecServerCommand, CODEC_SERVER_USAGE } from './commands/codec-server';
import { evalCommand } from './commands/eval';
import { EVAL_USAGE } from './commands/eval-args';
import {
  devCommand,
  DEV_USAGE,
  scriptedModelCommand,
  SCRIPTED_USAGE,
  serverCommand,
  SERVER_USAGE,
  workerCommand,
  WORKER_USAGE,
} from './commands/infra';
import {
  CONTINUE_USAGE,
  HANDBACK_USAGE,
  PAUSE_USAGE,
  RESUME_USAGE,
  SAY_USAGE,
  TAKEOVER_USAGE,
  continueCommand,
  handbackCommand,
  pauseCommand,
  resumeCommand,
  sayCommand,
  takeoverCommand,
} from './commands/control';

type Command = { run: (argv: readonly string[]) => Promise<number>; usage: string; about: string };

const COMMANDS: Record<string, Command> = {
  demo: {
    run: demoCommand,
    usage: DEMO_USAGE,
    about: 'the whole thing on this machine: dev server + UI, demo site, scripted model, worker, one task',
  },
  run: {
    run: runCommand,
    usage: RUN_USAGE,
    about: 'start a task and follow it (replies to questions from the terminal)',
  },
  reply: { run: replyCommand, usage: REPLY_USAGE, about: "reply to a waiting task's question" },
  schedule: {
    run: scheduleCommand,
    usage: SCHEDULE_USAGE,
    about: 'run a task on a cron or an interval; --notify-when: a webhook when its output changes',
  },
  status: { run: statusCommand, usage: STATUS_USAGE, about: 'show where a task is' },
  list: { run: listCommand, usage: LIST_USAGE, about: 'list tasks (filter by state)' },
  pause: { run: pauseCommand, usage: PAUSE_USAGE, about: 'pause a task after its step (its page held, then saved)' },
  resume: { run: resumeCommand, usage: RESUME_USAGE, about: 'resume a paused task where it stopped' },
  say: { run: sayCommand, usage: SAY_USAGE, about: 'tell a running task something; the model reads it next step' },
  continue: {
    run: continueCommand,
    usage: CONTINUE_USAGE,
    about: 'give a finished task a follow-up task (same run folder, page and history)',
  },
  fork: {
    run: forkCommand,
    usage: FORK_USAGE,
    about: "start a new task from another's steps 1…N (its page then); --branches K runs best of K",
  },
  replay: {
    run: replayCommand,
    usage: REPLAY_USAGE,
    about: "run a recorded task's actions again, without the model while the page matches",
  },
  adopt: {
    run: adoptCommand,
    usage: ADOPT_USAGE,
    about: 'continue a run folder Fara wrote (waiting for a reply, or cut off) as a durable task',
  },
  signin: {
    run: signinCommand,
    usage: SIGNIN_USAGE,
    about: "save a task's signed-in browser state under a name (`run --signin NAME` starts with it); list; rm",
  },
  takeover: { run: takeoverCommand, usage: TAKEOVER_USAGE, about: "take over a task's live browser (a lease)" },
  handback: { run: handbackCommand, usage: HANDBACK_USAGE, about: 'hand a taken-over task back to the agent' },
  cancel: {
    run: cancelCommand,
    usage: CANCEL_USAGE,
    about: 'cancel a task (its browser is closed, its run folder kept)',
  },
  eval: {
    run: (argv) => evalCommand(argv),
    usage: EVAL_USAGE,
    about: 'run a task set as a durable evaluation, score it, write reports; `eval compare A B`',
  },
  show: { run: showCommand, usage: SHOW_USAGE, about: "print a task's step table from its run folder" },
  view: { run: viewCommand, usage: VIEW_USAGE, about: "write a task's trajectory as one HTML page with markers" },
  console: {
    run: consoleCommand,
    usage: CONSOLE_USAGE,
    about: 'the web console: tasks, their steps and screenshots, replies and controls, in the browser',
  },
  mcp: {
    run: mcpCommand,
    usage: MCP_USAGE,
    about: 'serve MCP (stdio, or --http) so any agent can start durable tasks and come back for them',
  },
  worker: { run: workerCommand, usage: WORKER_USAGE, about: 'run a worker (browsers + activities + workflows)' },
  server: { run: serverCommand, usage: SERVER_USAGE, about: 'run the Temporal dev server with its Web UI' },
  dev: { run: devCommand, usage: DEV_USAGE, about: 'dev server and a worker in one process' },
  'scripted-model': { run: scriptedModelCommand, usage: SCRIPTED_USAGE, about: 'serve the scripted test-double model' },
  'codec-server': {
    run: codecServerCommand,
    usage: CODEC_SERVER_USAGE,
    about: 'decrypt payloads for the Temporal Web UI and CLI (with encryption configured)',
  },
};

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.about}`);
  return [
    'cua — a durable computer-use agent on Temporal',
    '',
    'Usage: npx cua [--config FILE] <command> [options]',
    '',
    'Two agents, one engine:',
    '  the browser agent (Fara-style: a model acts on screenshots of Chromium)',
    '    npx cua demo                      a hotel booking on the bundled demo site, end to end',
    '    npx cua run "<task>" --url URL    a task of yours (workers from `npx cua dev` or `npx cua worker`)',
    '  the desktop agent (open-computer-use-style: a sandboxed Linux desktop with xterm, an editor and a shell)',
    '    npx cua demo --desktop            a shopping list in the text editor, a command, one question',
    '    npx cua run "<task>" --env desktop',
    '',
    'Commands:',
    ...lines,
    '',
    'Options: --help (also after a command), --version',
    'Configuration: --config FILE (before or after the command), CUA_CONFIG, ./cua.config.json; environment overrides such as',
    'TEMPORAL_ADDRESS, CUA_MODEL_BASE_URL, CUA_MODEL, CUA_MODEL_API_KEY, CUA_ENCRYPTION_KEYS (see docs/configuration.md).',
  ].join('\n');
}

function version(): string {
  const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Options given before the command word: `--config FILE` (or `--config=FILE`) names the config file for whichever
 * command follows, as CUA_CONFIG does (a command's own --config still wins). Returns the remaining words.
 */
function takeGlobalOptions(argv: readonly string[]): string[] {
  const words = [...argv];
  while (words[0]?.startsWith('--config')) {
    const word = words.shift() as string;
    const file =
      word === '--config' ? words.shift() : word.startsWith('--config=') ? word.slice('--config='.length) : '';
    if (file === '') throw new UsageError(`unknown option '${word}' (see npx cua --help)`);
    if (file === undefined || file.startsWith('-'))
      throw new UsageError('--config needs a file: npx cua --config FILE <command>');
    if (!existsSync(file)) throw new UsageError(`--config ${file}: no such file`);
    process.env.CUA_CONFIG = file;
  }
  return words;
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    const [command, ...rest] = takeGlobalOptions(argv);
    if (!command || command === '--help' || command === '-h' || command === 'help') {
      console.log(help());
      return 0;
    }
    if (command === '--version' || command === '-v') {
      console.log(version());
      return 0;
    }
    const cmd = COMMANDS[command];
    if (!cmd) throw new UsageError(`unknown command '${command}' (see npx cua --help)`);
    return await cmd.run(rest);
  } catch (err) {
    if (err instanceof Error && err.name !== 'Error') {
      // Our typed errors (usage, config, unknown task, unreachable server...) are one clear line.
      console.error(`cua: ${err.message}`);
      return err instanceof UsageError || err instanceof InvalidTaskInputError ? 2 : 1;
    }
    console.error(`cua: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}
