// What a worker checks of its model endpoints' prompt files before it takes work: each file is read and rendered for
// the endpoint's profile; one that cannot be read, or that offers an action the profile lacks, stops the start with
// a one-line ConfigError; one that offers fewer actions (the model may use only those) or lists none is said in one
// line. Tasks of another profile are checked again when they start (activities/run.ts).
import { endpointProfile, promptActionsNotice, promptFileActions } from '../model/endpoint-prompt';
import { PromptActionsError, PromptFileError } from '../model/errors';
import { ConfigError } from '../common/config-error';
import type { Config } from './config';

/** The notice lines to print at start (one per narrowing prompt file); ConfigError for a file that cannot serve. */
export async function checkPromptFiles(models: Config['models']): Promise<string[]> {
  const lines: string[] = [];
  for (const [name, settings] of Object.entries(models)) {
    if (!settings.promptFile) continue;
    const profile = endpointProfile(settings);
    try {
      const notice = promptActionsNotice(name, profile, await promptFileActions(settings.promptFile, profile));
      if (notice) lines.push(notice);
    } catch (err) {
      if (err instanceof PromptFileError || err instanceof PromptActionsError) {
        throw new ConfigError(`models.${name}.promptFile: ${err.message}`);
      }
      throw err;
    }
  }
  return lines;
}
