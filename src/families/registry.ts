// The model families a process knows, by name: Fara-1.5 and Fara-7B built in, more registered at runtime (an
// application's, a test's). A task names its family in `TaskInput.profile`; the name is checked against this
// registry when the task starts (the client, `cua run`) and when the worker runs it (startRun), since the task
// contract sits below this layer.
import { ANTHROPIC_COMPUTER_FAMILY } from './anthropic-computer/family';
import { FARA15_FAMILY } from './fara-1.5/family';
import { FARA7B_FAMILY } from './fara-7b/family';
import { OPENAI_COMPUTER_FAMILY } from './openai-computer/family';
import type { ModelFamily } from './family';
import { GEMINI_COMPUTER_FAMILY } from './gemini-computer/family';
import { UI_TARS_FAMILY } from './ui-tars-1.5/family';
import { QWEN_VL_FAMILY } from './qwen-vl/family';

/** A name no family is registered under. */
export class UnknownFamilyError extends Error {
  override name = 'UnknownFamilyError';
  constructor(
    readonly family: string,
    readonly known: readonly string[],
  ) {
    super(`unknown model family '${family}' (known: ${known.join(', ')})`);
  }
}

const families = new Map<string, ModelFamily>();

/** Adds a family; its name must be new (a second registration under one name is an error). */
export function registerFamily(family: ModelFamily): void {
  const known = families.get(family.name);
  if (known === family) return;
  if (known) throw new Error(`a model family named '${family.name}' is already registered`);
  families.set(family.name, family);
}

/** The family of this name; UnknownFamilyError (naming the known ones) for any other. */
export function familyOf(name: string): ModelFamily {
  const family = families.get(name);
  if (!family) throw new UnknownFamilyError(name, familyNames());
  return family;
}

/** Whether a family of this name is registered. */
export function isFamilyName(name: string): boolean {
  return families.has(name);
}

/** The registered families' names, built-in ones first. */
export function familyNames(): string[] {
  return [...families.keys()];
}

registerFamily(FARA15_FAMILY);
registerFamily(FARA7B_FAMILY);
registerFamily(OPENAI_COMPUTER_FAMILY);
registerFamily(ANTHROPIC_COMPUTER_FAMILY);
registerFamily(GEMINI_COMPUTER_FAMILY);
registerFamily(UI_TARS_FAMILY);
registerFamily(QWEN_VL_FAMILY);

/** A task's family choice as it starts: the family (`TaskInput.profile`), the identity, the environment. */
export interface FamilyChoice {
  profile: string;
  identity?: string | undefined;
  environment?: string | undefined;
}

/**
 * Why a task cannot start with its family and identity, as the field and a one-line reason, or null: a family no
 * process here registered, or an identity that is no registry name of the family. A desktop task has no family.
 */
export function familyIssue(task: FamilyChoice): { field: 'profile' | 'identity'; reason: string } | null {
  if (task.environment === 'desktop') return null;
  if (!isFamilyName(task.profile)) {
    return { field: 'profile', reason: new UnknownFamilyError(task.profile, familyNames()).message };
  }
  const issue = task.identity === undefined ? null : familyOf(task.profile).identityIssue(task.identity, false);
  return issue ? { field: 'identity', reason: issue } : null;
}

/**
 * The family named by either of its two names (`profile`, the first, kept on the wire; `family`, the newer), or
 * undefined when neither is given; an error when both are given and differ.
 */
export function eitherFamilyName(profile: string | undefined, family: string | undefined): string | undefined {
  if (profile !== undefined && family !== undefined && profile !== family) {
    throw new Error(`family '${family}' and profile '${profile}' differ: give one`);
  }
  return family ?? profile;
}
