// Who the model is told it is: the identities a system prompt opens with, by registry name, each belonging to one
// family; and the rules for choosing one. The worker config may name a registry identity or give a text of its
// own (at least MIN_CUSTOM_IDENTITY_LENGTH characters, which tells it apart from a mistyped name); a task may only
// name one, since a task starter must not write the system prompt. Pure: the task input's schema checks a task's
// choice in workflow code too.
import type { FaraName } from '../actions/fara';
import { IdentityProfileError, UnknownIdentityError } from './errors';

interface IdentityEntry {
  family: FaraName;
  text: string;
}

/** Who the model is told it is, by key. Each identity belongs to one family. */
export const IDENTITIES: Readonly<Record<string, IdentityEntry>> = {
  fara_qwen35: {
    family: 'fara-1.5',
    text: [
      "You are Fara, a computer use agent (CUA) that works in a web browser on the user's behalf. Microsoft AI Frontiers built you to carry out and automate tasks that need a browser.",
      'You were trained between January and April 2026, so what you know stops in early 2026. Anything that may have changed since then you must look up on the live web in the browser instead of answering from memory.',
      'This edition is Qwen3.5-9B fine-tuned with supervised learning on synthetic data made by Microsoft AI Frontiers.',
    ].join('\n\n'),
  },
  fara_qwen3vl: {
    family: 'fara-1.5',
    text: [
      "You are Fara, a computer use agent (CUA) that works in a web browser on the user's behalf. Microsoft AI Frontiers built you to carry out and automate tasks that need a browser.",
      'You were trained between January and March 2026, so what you know stops in early 2026. Anything that may have changed since then you must look up on the live web in the browser instead of answering from memory.',
      'This edition is Qwen3-VL-8B-Instruct fine-tuned with supervised learning on synthetic data made by Microsoft AI Frontiers.',
    ].join('\n\n'),
  },
  fara_7b: {
    family: 'fara-7b',
    text: [
      "You are Fara-7B, a computer use agent that works in a web browser on the user's behalf, built by Microsoft on Qwen2.5-VL-7B.",
      'You complete tasks by looking at screenshots of the browser and acting on them one step at a time. When a fact may be recent, look it up on the web rather than relying on memory.',
    ].join('\n\n'),
  },
};

/** The identity used when none is asked for. */
export const DEFAULT_IDENTITY: Readonly<Record<FaraName, string>> = {
  'fara-1.5': 'fara_qwen35',
  'fara-7b': 'fara_7b',
};

/** Custom identity texts must be at least this long, which tells them apart from mistyped registry keys. */
export const MIN_CUSTOM_IDENTITY_LENGTH = 20;

/** The registry names of a family's identities, in registry order. */
export function identitiesOf(family: FaraName): string[] {
  return Object.keys(IDENTITIES).filter((name) => IDENTITIES[name]?.family === family);
}

/** The family a registry name belongs to; undefined for any other text. */
export function identityProfile(identity: string): FaraName | undefined {
  return Object.hasOwn(IDENTITIES, identity) ? IDENTITIES[identity]?.family : undefined;
}

export interface IdentityRules {
  /** The family it must belong to; absent: any family's name will do. */
  family?: FaraName;
  /** Whether a custom text is allowed (the worker config: yes; a task: no). */
  custom: boolean;
}

/**
 * Why `identity` cannot be used under `rules`, or null when it can: a name of another family, a text that is no
 * registry name where only names are allowed, or one too short to be a custom text.
 */
export function identityError(
  identity: string,
  rules: IdentityRules,
): UnknownIdentityError | IdentityProfileError | null {
  const owner = identityProfile(identity);
  if (owner !== undefined) {
    return rules.family === undefined || owner === rules.family
      ? null
      : new IdentityProfileError(identity, owner, rules.family, identitiesOf(rules.family));
  }
  const known = rules.family ? identitiesOf(rules.family) : Object.keys(IDENTITIES);
  if (!rules.custom) return new UnknownIdentityError(identity, known, 'names-only');
  return identity.length >= MIN_CUSTOM_IDENTITY_LENGTH ? null : new UnknownIdentityError(identity, known, 'too-short');
}

/** The identity text for a registry name of `family`, or a custom text given in its place (thrown errors: above). */
export function resolveIdentity(family: FaraName, identity: string = DEFAULT_IDENTITY[family]): string {
  const error = identityError(identity, { family, custom: true });
  if (error) throw error;
  return IDENTITIES[identity]?.text ?? identity;
}
