// What the provider families say to the Fara families' prompt settings: they write their own system prompt, so a
// registry identity and an endpoint's prompt file are refused, each in one line naming the family.
import { PromptFileError } from '../../model/errors';
import type { ModelFamily } from '../family';

export function ownPromptMembers(name: string): Pick<ModelFamily, 'identityIssue' | 'promptFileActions'> {
  return {
    identityIssue: () => `identities are the Fara families'; ${name} has its own system prompt`,
    promptFileActions(file) {
      const error = new PromptFileError(file, 'unreadable');
      error.message = `a prompt file is for the Fara families; ${name} has its own system prompt (${file})`;
      return Promise.reject(error);
    },
  };
}
