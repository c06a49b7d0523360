// `cua adopt <folder>`: continue a run folder the original (Fara) wrote as a durable task (client/adopt.ts). The folder is
// checked here (one line says what is wrong with it), copied into the configured run store under a new id, and the
// task started; a question the folder waits on gets its reply with `cua reply <id> "…"`.
import { loadConfig } from '../../src/runtime/config';
import { checkAdoptable } from '../../client/adopt';
import { agentClientFor } from '../../client/client';
import { familyFlag, intFlag, one, parse } from '../args';

export const ADOPT_USAGE =
  'npx cua adopt <folder> [--url URL] [--id ID] [--model NAME] [--model-base-url URL] [--more-steps N]\n' +
  '       [--family fara-1.5|fara-7b] [--detach] [--json] [--config FILE]';

export async function adoptCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      url: { type: 'string' },
      id: { type: 'string' },
      model: { type: 'string' },
      'model-base-url': { type: 'string' },
      'more-steps': { type: 'string' },
      profile: { type: 'string' },
      family: { type: 'string' },
      // Accepted like every command that starts a task; changes nothing: adopt returns once the task has started.
      detach: { type: 'boolean' },
      json: { type: 'boolean' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    ADOPT_USAGE,
  );
  if (values.help) return (console.log(`usage: ${ADOPT_USAGE}`), 0);
  const folder = one(positionals, 'folder', ADOPT_USAGE);
  const moreSteps = intFlag(values['more-steps'], 'more-steps');
  const profile = familyFlag(values);
  await checkAdoptable(folder); // before connecting: a folder that cannot be adopted is said so with no server up
  const config = loadConfig({ file: values.config });
  const agent = await agentClientFor(config);
  try {
    const adopted = await agent.adopt(folder, {
      ...(values.url !== undefined ? { url: values.url } : {}),
      ...(values.id !== undefined ? { id: values.id } : {}),
      ...(values.model !== undefined ? { model: values.model } : {}),
      ...(values['model-base-url'] !== undefined ? { modelBaseUrl: values['model-base-url'] } : {}),
      ...(moreSteps !== undefined ? { moreSteps } : {}),
      ...(profile !== undefined ? { profile } : {}),
    });
    const { id, steps, question } = adopted;
    if (values.json) {
      console.log(JSON.stringify({ id, steps, question, folder: adopted.input.adoptOf?.folder }));
      return 0;
    }
    console.log(`${id} adopts ${folder} (${steps} step${steps === 1 ? '' : 's'}, copied into the run store)`);
    console.log(
      question === null
        ? `it goes on at step ${steps + 1}, in the page reopened at the folder's last URL; follow it with: npx cua status ${id}`
        : `it waits for your reply to: ${question}\nreply with: npx cua reply ${id} "<your reply>"`,
    );
    return 0;
  } finally {
    await agent.close();
  }
}
