// Argument parsing for the CLI commands: node's parseArgs with strict checking and one-line usage errors.
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { eitherFamilyName, familyNames, isFamilyName } from '../src/families/registry';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;
/** Spelled out so the declaration build can name it (node's own name for the options type is not exported). */
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

export function parse<O extends Options>(argv: readonly string[], options: O, usage: string): Parsed<O> {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message.split('\n')[0]}\nusage: ${usage}`);
  }
}

export function intFlag(value: string | undefined, name: string, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`--${name} must be a whole number ≥ ${min}, got '${value}'`);
  return n;
}

export function one(positionals: string[], what: string, usage: string): string {
  const [value, extra] = positionals;
  if (!value) throw new UsageError(`missing ${what}\nusage: ${usage}`);
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'\nusage: ${usage}`);
  return value;
}

/** `--cache NAME`: the action cache's name (letters, digits, dot, dash, underscore); browser tasks only. */
export function cacheFlag(name: string, env: string | undefined): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw new UsageError(`--cache must be a name of letters, digits, dot, dash and underscore (max 64), got '${name}'`);
  }
  if (env !== undefined && env !== 'browser')
    throw new UsageError('--cache is for browser tasks (their pages are what it matches)');
  return name;
}

/**
 * The model family of `--profile` or `--family` (the same flag, its first and newer name), checked against the
 * registered families; undefined when neither is given.
 */
export function familyFlag(values: { profile?: string | undefined; family?: string | undefined }): string | undefined {
  let name: string | undefined;
  try {
    name = eitherFamilyName(values.profile, values.family);
  } catch {
    throw new UsageError(`--family '${values.family}' and --profile '${values.profile}' differ: give one`);
  }
  if (name !== undefined && !isFamilyName(name)) {
    const flag = values.family !== undefined ? '--family' : '--profile';
    throw new UsageError(`${flag} must be one of ${familyNames().join(', ')}, got '${name}'`);
  }
  return name;
}
