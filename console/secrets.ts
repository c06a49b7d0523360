// Secret values never leave the console, only their `{{secret:NAME}}` placeholders. What the run folder and history
// hold already keeps the placeholder (src/agent/secrets.ts); this is the second guard for a value that came back some
// other way (a page that echoed it into an observation, a person who pasted it into an instruction): every string the
// console sends has each value the console's own config knows (`secrets`: a value, or the variable holding it)
// replaced by its placeholder.
import type { Config } from '../src/runtime/config';

export interface KnownSecret {
  name: string;
  value: string;
}

/** The secret values the configuration gives (a variable that is unset here gives none), longest first. */
export function knownSecrets(config: Pick<Config, 'secrets'>, env: NodeJS.ProcessEnv = process.env): KnownSecret[] {
  const out: KnownSecret[] = [];
  for (const [name, spec] of Object.entries(config.secrets ?? {})) {
    const value = spec.value ?? (spec.env ? env[spec.env] : undefined);
    if (value) out.push({ name, value });
  }
  return out.sort((a, b) => b.value.length - a.value.length);
}

/** `value` with every known secret value in its strings replaced by the secret's placeholder (a copy; JSON-shaped). */
export function redactSecrets<T>(value: T, secrets: readonly KnownSecret[]): T {
  if (!secrets.length) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return secrets.reduce((s, k) => s.split(k.value).join(`{{secret:${k.name}}}`), v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
