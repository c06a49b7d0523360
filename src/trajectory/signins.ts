// Saved sign-ins: a named browser state (cookies, localStorage and IndexedDB per origin, and the hosts they belong
// to) kept in the run store under `_signins/`, so every worker can load it into a new session. A task id cannot start
// with `_`, so the prefix never meets a run folder. Each state is its own file, encrypted with the payload codec's
// key when encryption is on (src/codec/sealed.ts; a sealed file is refused where no key is configured); an index
// file lists names, hosts, when and from which task, and sizes, never cookie values. Workflows carry the name only.
import { isRuntimeCookie } from '../contract/runtime-cookies';
import { CHECKPOINTS_DIR, LATEST_CHECKPOINT_FILE, QUESTION_STATE_FILE } from './layout';
import type { RunStore } from './store';

/** Where sign-ins live in the run store. */
export const SIGNINS_PREFIX = '_signins';
const INDEX_KEY = `${SIGNINS_PREFIX}/index.json`;
const FORMAT = 'cua-signin/1';

/** A sign-in's name: lower-case letters, digits, dot, dash, underscore; 1-64, starting with a letter or digit. */
export const SIGNIN_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** A cookie as a browser context stores it (Playwright's storage state); only `domain` is read here. */
export type SavedCookie = { name: string; value: string; domain: string; path: string } & Record<string, unknown>;
/** One origin's localStorage (and IndexedDB, when captured). */
export type SavedOrigin = { origin: string; localStorage: Array<{ name: string; value: string }> } & Record<
  string,
  unknown
>;
/** A browser context's storage: what a session opens with. */
export type SavedStorage = { cookies: SavedCookie[]; origins: SavedOrigin[] };

/** What `list` shows of a sign-in. */
export type SigninSummary = {
  name: string;
  /** The hosts its cookies and storage belong to (cookie domains without their leading dot, origins' hosts). */
  hosts: string[];
  savedAt: string;
  /** The task whose page it was saved from. */
  fromTask: string;
  /** Its file's size in bytes. */
  bytes: number;
  encrypted: boolean;
};

/** A saved sign-in, loaded. */
export type Signin = SigninSummary & { storage: SavedStorage };

/** Seals and opens texts (src/codec/sealed.ts Sealer); absent: encryption is off. */
export interface SigninSealer {
  readonly acceptPlaintext: boolean;
  seal(text: string): { keyId: string; data: string };
  open(sealed: { keyId: string; data: string }): string;
}

/** A sign-in name, state or file that cannot be used: one line saying why. */
export class SigninError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The name, or a SigninError saying what a name may be. */
export function checkSigninName(name: string): string {
  if (!SIGNIN_NAME.test(name)) {
    throw new SigninError(
      `sign-in name '${name}': use 1-64 lower-case letters, digits, dots, dashes or underscores, ` +
        'starting with a letter or digit',
    );
  }
  return name;
}

/** The hosts a storage belongs to, sorted and without repeats. */
export function storageHosts(storage: SavedStorage): string[] {
  const hosts = new Set<string>();
  for (const c of storage.cookies) if (c.domain) hosts.add(c.domain.replace(/^\./, ''));
  for (const o of storage.origins) {
    try {
      hosts.add(new URL(o.origin).host);
    } catch {
      // an origin that is no URL names no host
    }
  }
  return [...hosts].sort();
}

/**
 * The task's own part of a page state: without the cookies the runtime adds to every session (the same-tab search
 * cookie), and without origins that are no web page's (an opaque `null`, a browser page), which no later session can
 * be given storage for.
 */
export function taskStorage(storage: SavedStorage): SavedStorage {
  const web = (origin: string) => {
    try {
      return ['http:', 'https:'].includes(new URL(origin).protocol);
    } catch {
      return false;
    }
  };
  return {
    ...storage,
    cookies: storage.cookies.filter((c) => !isRuntimeCookie(c)),
    origins: storage.origins.filter((o) => web(o.origin)),
  };
}

type FileBody = { format: typeof FORMAT; sealed?: { keyId: string; data: string }; plain?: Omit<Signin, 'bytes'> };
type Index = { format: typeof FORMAT; signins: Record<string, SigninSummary> };

export class SigninStore {
  constructor(
    private readonly store: RunStore,
    private readonly sealer?: SigninSealer,
  ) {}

  private key(name: string): string {
    return `${SIGNINS_PREFIX}/${checkSigninName(name)}.json`;
  }

  /** Saves (or replaces) a sign-in, the task's own part of the state (taskStorage); sealed when encryption is on. */
  async save(name: string, state: SavedStorage, fromTask: string): Promise<SigninSummary> {
    const key = this.key(name);
    const storage = taskStorage(state);
    const record: Omit<Signin, 'bytes'> = {
      name,
      hosts: storageHosts(storage),
      savedAt: new Date().toISOString(),
      fromTask,
      encrypted: this.sealer !== undefined,
      storage,
    };
    const body: FileBody = this.sealer
      ? { format: FORMAT, sealed: this.sealer.seal(JSON.stringify(record)) }
      : { format: FORMAT, plain: record };
    const text = JSON.stringify(body);
    const { storage: _storage, ...meta } = record;
    const summary: SigninSummary = { ...meta, bytes: Buffer.byteLength(text) };
    await this.store.withLock(INDEX_KEY, async () => {
      await this.store.writeAtomic(key, text);
      const index = await this.readIndex();
      index.signins[name] = summary;
      await this.store.writeAtomic(INDEX_KEY, JSON.stringify(index, null, 2));
    });
    return summary;
  }

  /** The sign-in, or undefined when there is none of that name; a SigninError when it cannot be opened here. */
  async load(name: string): Promise<Signin | undefined> {
    const text = await this.store.readText(this.key(name));
    if (!text) return undefined; // absent, or emptied by `remove`
    let body: FileBody;
    try {
      body = JSON.parse(text) as FileBody;
    } catch {
      throw new SigninError(`sign-in '${name}': its file ${this.store.describe(this.key(name))} is not JSON`);
    }
    const record = this.opened(name, body);
    if (!record || !Array.isArray(record.storage?.cookies) || !Array.isArray(record.storage?.origins)) {
      throw new SigninError(`sign-in '${name}': its file holds no browser state`);
    }
    return { ...record, bytes: Buffer.byteLength(text) };
  }

  private opened(name: string, body: FileBody): Omit<Signin, 'bytes'> | undefined {
    if (body.sealed) {
      if (!this.sealer) {
        throw new SigninError(
          `sign-in '${name}' is encrypted: configure its key (encryption.keys or CUA_ENCRYPTION_KEYS) to use it`,
        );
      }
      try {
        return JSON.parse(this.sealer.open(body.sealed)) as Omit<Signin, 'bytes'>;
      } catch (err) {
        throw new SigninError(
          `sign-in '${name}' cannot be opened: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    if (this.sealer && !this.sealer.acceptPlaintext) {
      throw new SigninError(`sign-in '${name}' is not encrypted, and encryption.acceptPlaintext is false`);
    }
    return body.plain;
  }

  /** Every sign-in, by name. */
  async list(): Promise<SigninSummary[]> {
    const index = await this.readIndex();
    return Object.values(index.signins).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Removes a sign-in (its file is emptied: no state is left behind); false when there was none of that name. */
  async remove(name: string): Promise<boolean> {
    const key = this.key(name);
    return this.store.withLock(INDEX_KEY, async () => {
      const index = await this.readIndex();
      const had = name in index.signins || Boolean(await this.store.readText(key));
      if (!had) return false;
      await this.store.writeAtomic(key, '');
      delete index.signins[name];
      await this.store.writeAtomic(INDEX_KEY, JSON.stringify(index, null, 2));
      return true;
    });
  }

  private async readIndex(): Promise<Index> {
    const text = await this.store.readText(INDEX_KEY);
    if (!text) return { format: FORMAT, signins: {} };
    try {
      const index = JSON.parse(text) as Index;
      return { format: FORMAT, signins: index.signins ?? {} };
    } catch {
      throw new SigninError(`the sign-in index ${this.store.describe(INDEX_KEY)} is not JSON`);
    }
  }
}

/**
 * The storage of a task's last saved page: the newer of its last step checkpoint and the page saved at a question
 * (activities/environments/browser-state.ts writes both), or undefined when it saved none (a desktop task, a task
 * that never opened a page). Secret values were left out when they were saved.
 */
export async function taskPageStorage(
  store: RunStore,
  taskId: string,
): Promise<{ storage: SavedStorage; capturedAt: string | null } | undefined> {
  const read = async <T>(key: string): Promise<T | undefined> => {
    const text = await store.readText(`${taskId}/${key}`);
    if (!text) return undefined;
    try {
      return JSON.parse(text) as T;
    } catch {
      return undefined;
    }
  };
  type Checkpoint = { capturedAt?: string; storage_file?: string };
  type QuestionPage = Partial<SavedStorage> & { capturedAt?: string; storage?: SavedStorage };
  const [latest, question] = await Promise.all([
    read<Checkpoint>(LATEST_CHECKPOINT_FILE),
    read<QuestionPage>(QUESTION_STATE_FILE),
  ]);
  const file = latest?.storage_file;
  const fromCheckpoint =
    file?.startsWith(`${CHECKPOINTS_DIR}/`) && !file.includes('..') ? await read<SavedStorage>(file) : undefined;
  // A question's file is a whole page (its storage inside) or, from before pages were saved, a bare storage state.
  const fromQuestion = question?.storage ?? (question?.cookies ? (question as SavedStorage) : undefined);
  const checkpointAt = latest?.capturedAt ?? '';
  const questionAt = question?.capturedAt ?? '';
  const pick =
    fromQuestion && (!fromCheckpoint || questionAt > checkpointAt)
      ? { storage: fromQuestion, capturedAt: question?.capturedAt ?? null }
      : fromCheckpoint && { storage: fromCheckpoint, capturedAt: latest?.capturedAt ?? null };
  if (!pick || !Array.isArray(pick.storage.cookies) || !Array.isArray(pick.storage.origins)) return undefined;
  return pick;
}
