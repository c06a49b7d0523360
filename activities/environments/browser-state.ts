// The browser driver's saved pages in the run store (src/browser/page-state.ts captures and restores them):
// - at a question, the whole page in `browser_state.json` (before this, that file was Playwright's bare storage
//   state; such a file still restores, as storage and the run's URL);
// - after every act, a step checkpoint `checkpoints/step-<NNNN>.json` (URL, forms, scroll, focus, sessionStorage)
//   naming its storage blob `checkpoints/storage-<sha256>.json` (cookies, localStorage, IndexedDB), written only when
//   its hash changed, and `checkpoints/latest.json`, a copy of the newest one naming its file.
// A re-open restores whichever is newer: the last finished step's page, or the page saved at the question.
import { createHash } from 'node:crypto';
import { knownSecretValues } from '../../src/agent/secrets';
import type { BrowserEnvironment, StorageState } from '../../src/browser/environment';
import { PAGE_STATE_FORMAT, captureDocumentState, captureOpenStorage } from '../../src/browser/page-state';
import type { DocumentState, PageState } from '../../src/browser/page-state';
import { RunStoreUnavailableError } from '../../src/trajectory/errors';
import type { ActivityDeps, RunFiles } from '../support';

// The page saved at a question (the name it had when it held only Playwright's storage state), and the checkpoints.
export { CHECKPOINTS_DIR, LATEST_CHECKPOINT_FILE, QUESTION_STATE_FILE } from '../../src/trajectory/layout';
import { CHECKPOINTS_DIR, LATEST_CHECKPOINT_FILE, QUESTION_STATE_FILE } from '../../src/trajectory/layout';

/** One step's checkpoint file: the document state and the storage blob it goes with (run-relative key). */
export type StepCheckpoint = DocumentState & { step: number; generation: number; storage_file: string };

/** `checkpoints/latest.json`: the newest step checkpoint, a copy of it with the name of its step's file. */
export type LatestCheckpoint = StepCheckpoint & { file: string };

/**
 * A saved page found for a re-open: its storage, its document state (absent in a question's file saved before pages
 * were), and where it came from (named in the session_restored note).
 */
export type SavedPage = { storage: StorageState; document?: DocumentState; from: string };

/** A page that does not answer a capture in this time (a script stuck in a loop) gets no checkpoint this step. */
const CAPTURE_LIMIT_MS = 5_000;

/** A step's checkpoint file (run-relative key), e.g. `checkpoints/step-0007.json`. */
export const stepCheckpointFile = (step: number): string =>
  `${CHECKPOINTS_DIR}/step-${String(step).padStart(4, '0')}.json`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Per run, what this process last wrote: the storage blob's hash, and sessionStorage kept from earlier captures. */
type Remembered = {
  storageHash: string | null;
  sessionStorage: DocumentState['sessionStorage'];
  /** The storage last captured (a step's capture reads only the open origins and keeps the rest from it). */
  storage?: StorageState;
};

export class PageCheckpoints {
  private readonly runs = new Map<string, Remembered>();

  constructor(
    private readonly deps: ActivityDeps,
    private readonly files: RunFiles,
  ) {}

  private secrets(): string[] {
    return knownSecretValues(this.deps.config.secrets ?? {}, process.env);
  }

  private remembered(taskId: string): Remembered {
    let r = this.runs.get(taskId);
    if (!r) {
      r = { storageHash: null, sessionStorage: {} };
      this.runs.set(taskId, r);
      if (this.runs.size > 256) this.runs.delete(this.runs.keys().next().value as string);
    }
    return r;
  }

  /**
   * The page now, with sessionStorage of origins the tab showed earlier kept (the tab's storage outlives a page).
   * `full`: storage of every origin the context visited (Playwright's storage state, which opens each closed one
   * again); else of the open origins, over what was captured before (a step's checkpoint, in a few ms).
   */
  private async capture(taskId: string, env: BrowserEnvironment, full: boolean): Promise<PageState> {
    const secretValues = this.secrets();
    const r = this.remembered(taskId);
    const context = env.controller.context;
    const [storage, doc] = await Promise.all([
      full ? context.storageState({ indexedDB: true }) : captureOpenStorage(context, r.storage),
      captureDocumentState(env.page, { secretValues }),
    ]);
    r.sessionStorage = { ...r.sessionStorage, ...doc.sessionStorage };
    r.storage = storageWithoutSecrets(storage, secretValues);
    return { ...doc, sessionStorage: r.sessionStorage, storage: r.storage };
  }

  /**
   * The step's checkpoint, after its act was recorded. A page that cannot be captured is logged and skipped (never
   * the act's failure); the writes go through the run store, which waits out a full or unreachable one.
   */
  async saveStep(taskId: string, step: number, generation: number, env: BrowserEnvironment): Promise<void> {
    let state: PageState;
    try {
      state = await withTimeout(this.capture(taskId, env, false), CAPTURE_LIMIT_MS);
    } catch (err) {
      this.deps.log?.(`${taskId}: no page checkpoint after step ${step}: ${firstLine(err)}`);
      return;
    }
    try {
      const { storage, ...doc } = state;
      const storageFile = await this.writeStorage(taskId, storage);
      const checkpoint: StepCheckpoint = { ...doc, step, generation, storage_file: storageFile };
      const latest: LatestCheckpoint = { ...checkpoint, file: stepCheckpointFile(step) };
      // Both whole on their own (latest.json is a copy, not only a pointer), so they are written side by side.
      await Promise.all([
        this.files.store.writeAtomic(`${taskId}/${stepCheckpointFile(step)}`, JSON.stringify(checkpoint)),
        this.files.store.writeAtomic(`${taskId}/${LATEST_CHECKPOINT_FILE}`, JSON.stringify(latest)),
      ]);
    } catch (err) {
      if (err instanceof RunStoreUnavailableError) throw err; // the store waited and gave up: the task ends there
      this.deps.log?.(`${taskId}: page checkpoint after step ${step} not written: ${firstLine(err)}`);
    }
  }

  /** The storage blob, content-addressed: written only when its hash differs from the last one written. */
  private async writeStorage(taskId: string, storage: StorageState): Promise<string> {
    const text = JSON.stringify(storage);
    const hash = sha256(text);
    const file = `${CHECKPOINTS_DIR}/storage-${hash}.json`;
    const r = this.remembered(taskId);
    if (r.storageHash !== hash) {
      await this.files.store.createExclusive(`${taskId}/${file}`, text); // false when there already: same content
      r.storageHash = hash;
    }
    return file;
  }

  /** The whole page, saved when the task waits for a question (so a reply on any worker restores it). */
  async saveForQuestion(taskId: string, env: BrowserEnvironment): Promise<PageState> {
    const state = await this.capture(taskId, env, true);
    await this.files.store.writeAtomic(`${taskId}/${QUESTION_STATE_FILE}`, JSON.stringify(state));
    return state;
  }

  /** The newest saved page of the run (a step checkpoint or the question's), or undefined when none was saved. */
  async load(taskId: string): Promise<SavedPage | undefined> {
    const [checkpoint, question] = await Promise.all([this.loadCheckpoint(taskId), this.loadQuestion(taskId)]);
    const questionAt = question?.document?.capturedAt;
    const saved =
      checkpoint && questionAt && questionAt > checkpoint.document.capturedAt ? question : (checkpoint ?? question);
    if (saved?.document) {
      const r = this.remembered(taskId);
      r.sessionStorage = saved.document.sessionStorage;
      r.storage = saved.storage;
      r.storageHash = sha256(JSON.stringify(saved.storage));
    }
    return saved;
  }

  private async loadCheckpoint(taskId: string): Promise<(SavedPage & { document: DocumentState }) | undefined> {
    const checkpoint = await this.readJson<LatestCheckpoint>(`${taskId}/${LATEST_CHECKPOINT_FILE}`);
    const storage = checkpoint && (await this.readJson<StorageState>(`${taskId}/${checkpoint.storage_file}`));
    if (!checkpoint || !storage) return undefined;
    const { step, generation: _generation, storage_file: _storage, file: _file, ...document } = checkpoint;
    return { storage, document, from: `the checkpoint after step ${step}` };
  }

  private async loadQuestion(taskId: string): Promise<SavedPage | undefined> {
    const saved = await this.readJson<PageState | StorageState>(`${taskId}/${QUESTION_STATE_FILE}`);
    if (!saved) return undefined;
    if (!isPageState(saved)) {
      return { storage: saved, from: 'the question (cookies and localStorage only: saved before pages were)' };
    }
    const { storage, ...document } = saved;
    return { storage, document, from: 'the question' };
  }

  private async readJson<T>(key: string): Promise<T | undefined> {
    const text = await this.files.store.readText(key);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }
}

const isPageState = (saved: PageState | StorageState): saved is PageState =>
  'format' in saved && saved.format === PAGE_STATE_FORMAT;

/**
 * Storage without the cookies, localStorage items and IndexedDB records that hold a secret value (never written to the
 * run store). A record is checked as a whole, keys and values, as Playwright serialises it.
 */
export function storageWithoutSecrets(storage: StorageState, secrets: readonly string[]): StorageState {
  const known = secrets.filter((s) => s.length > 0);
  if (known.length === 0) return storage;
  const clean = (value: string) => !known.some((s) => value.includes(s));
  return {
    cookies: storage.cookies.filter((c) => clean(c.value)),
    origins: storage.origins.map((o) => {
      const { indexedDB } = o as { indexedDB?: IndexedDbDatabase[] };
      return {
        ...o,
        localStorage: o.localStorage.filter((i) => clean(i.value)),
        ...(indexedDB
          ? {
              indexedDB: indexedDB.map((db) => ({
                ...db,
                stores: db.stores.map((st) => ({ ...st, records: st.records.filter((r) => clean(JSON.stringify(r))) })),
              })),
            }
          : {}),
      };
    }),
  };
}

/** The part of Playwright's IndexedDB snapshot (storageState({indexedDB: true})) the secret check reads. */
type IndexedDbDatabase = { stores: Array<{ records: unknown[] }> };

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the page did not answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const firstLine = (err: unknown): string =>
  ((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '').trim();
