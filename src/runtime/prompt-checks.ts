// What a worker checks of its model endpoints before it takes work: each endpoint's family is a registered one, and
// each prompt file is read and rendered for the endpoint's family; one that cannot be read, or that offers an action
// the family lacks, stops the start with a one-line ConfigError; one that offers fewer actions (the model may use
// only those) or lists none is said in one line. Tasks of another family are checked again when they start
// (activities/run.ts).
import { familyOf, UnknownFamilyError } from '../families/registry';
import type { ModelFamily } from '../families/family';
import { endpointFamily, promptActionsNotice } from '../model/endpoint-prompt';
import { PromptActionsError, PromptFileError } from '../model/errors';
import { ConfigError } from '../common/config-error';
import type { Config } from './config';

/** The family an endpoint's model speaks; ConfigError when no family of that name is registered. */
function familyOfEndpoint(name: string, settings: Config['models'][string]): ModelFamily {
  try {
    return familyOf(endpointFamily(settings));
  } catch (err) {
    if (err instanceof UnknownFamilyError) throw new ConfigError(`models.${name}.profile: ${err.message}`);
    throw err;
  }
}

/** The notice lines to print at start (one per narrowing prompt file); ConfigError for a file that cannot serve. */
export async function checkPromptFiles(models: Config['models']): Promise<string[]> {
  const lines: string[] = [];
  for (const [name, settings] of Object.entries(models)) {
    const family = familyOfEndpoint(name, settings);
    if (settings.identity !== undefined) {
      const issue = family.identityIssue(settings.identity, true);
      if (issue) throw new ConfigError(`models.${name}.identity: ${issue}`);
    }
    if (!settings.promptFile) continue;
    try {
      const notice = promptActionsNotice(name, family, await family.promptFileActions(settings.promptFile));
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
