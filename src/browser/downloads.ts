// Downloads: save the file into the run's downloads folder (within a size and time cap) and build the page that
// tells the agent where it went.
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Download } from 'playwright';
import { DownloadLimitError } from './errors';

export type SavedDownload = { url: string; fileName: string; path: string; bytes: number };

/** A download past either cap is cancelled and its partial file removed. */
export type DownloadLimits = { maxBytes: number; maxMs: number };

export const DEFAULT_DOWNLOAD_LIMITS: DownloadLimits = { maxBytes: 100 * 1024 * 1024, maxMs: 60_000 };

/** How often a running download's partial file is measured. */
const WATCH_EVERY_MS = 250;

/** Longest file name kept (ASCII only after cleaning; leaves room for ` (n)` under the usual 255-byte limit). */
const MAX_NAME_LENGTH = 200;

/**
 * A file name that stays inside the downloads folder: the last path segment, unusual characters replaced, no
 * leading dot (neither hidden nor `.`/`..`), at most 200 characters (the extension kept), `download` when nothing
 * is left.
 */
export function safeName(suggested: string): string {
  const cleaned = path
    .basename(suggested)
    .replace(/[^\w.\- ()]/g, '_')
    .trim();
  if (/^[. ]*$/.test(cleaned)) return 'download';
  const visible = cleaned.replace(/^\.+/, '_');
  if (visible.length <= MAX_NAME_LENGTH) return visible;
  const ext = path.extname(visible);
  const keep = ext.length <= 20 ? ext : '';
  return visible.slice(0, MAX_NAME_LENGTH - keep.length).trimEnd() + keep;
}

async function freePath(dir: string, name: string): Promise<string> {
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let i = 0; ; i += 1) {
    const candidate = path.join(dir, i === 0 ? name : `${stem} (${i})${ext}`);
    const taken = await stat(candidate).then(
      () => true,
      () => false,
    );
    if (!taken) return candidate;
  }
}

/** A size as the download limits say it: `100 MiB`, `1.5 MiB`. */
export function mib(bytes: number): string {
  return `${Number((bytes / (1024 * 1024)).toFixed(2))} MiB`;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * The file the browser is writing: Playwright's own downloads folder + the download's id (its artifact path), with
 * `.crdownload` appended while in progress. Playwright has no public progress API, so this reads its artifact's
 * initializer; when that is missing (a future Playwright) or the file is elsewhere (a remote browser), only the time
 * cap and the size check of the saved file apply.
 */
function browserFileOf(download: Download): string | undefined {
  const artifact = (download as unknown as { _artifact?: { _initializer?: { absolutePath?: unknown } } })._artifact;
  const file = artifact?._initializer?.absolutePath;
  return typeof file === 'string' ? file : undefined;
}

async function sizeOf(file: string): Promise<number> {
  return stat(file).then(
    (s) => s.size,
    () => 0,
  );
}

/** Resolves with the reason once the download passes a cap (checked every 250 ms); never resolves after `stop`. */
function watchLimits(download: Download, limits: DownloadLimits): { exceeded: Promise<string>; stop(): void } {
  const started = Date.now();
  const file = browserFileOf(download);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const exceeded = new Promise<string>((resolve) => {
    const check = async (): Promise<void> => {
      if (stopped) return;
      if (Date.now() - started >= limits.maxMs) return resolve(`took longer than ${seconds(limits.maxMs)}`);
      const bytes = file ? Math.max(await sizeOf(`${file}.crdownload`), await sizeOf(file)) : 0;
      if (bytes > limits.maxBytes) return resolve(`larger than ${mib(limits.maxBytes)}`);
      if (!stopped) timer = setTimeout(() => void check(), WATCH_EVERY_MS);
    };
    timer = setTimeout(() => void check(), WATCH_EVERY_MS);
  });
  return {
    exceeded,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Saves a finished download into `dir` under its suggested name (numbered if taken). One that passes the size or
 * time cap is cancelled, its partial file removed, and fails with DownloadLimitError.
 */
export async function saveDownload(
  download: Download,
  dir: string,
  limits: DownloadLimits = DEFAULT_DOWNLOAD_LIMITS,
): Promise<SavedDownload> {
  await mkdir(dir, { recursive: true });
  const name = safeName(download.suggestedFilename());
  const target = await freePath(dir, name);
  const watch = watchLimits(download, limits);
  let exceeded: string | undefined;
  try {
    exceeded = await Promise.race([download.saveAs(target).then(() => undefined), watch.exceeded]);
  } finally {
    watch.stop();
  }
  const size = exceeded === undefined ? await sizeOf(target) : 0;
  if (exceeded === undefined && size > limits.maxBytes) exceeded = `larger than ${mib(limits.maxBytes)}`;
  if (exceeded !== undefined) {
    await download.cancel().catch(() => undefined);
    const file = browserFileOf(download);
    await Promise.all([target, ...(file ? [file, `${file}.crdownload`] : [])].map((f) => rm(f, { force: true })));
    throw new DownloadLimitError(`download of ${name} stopped: ${exceeded}`);
  }
  return { url: download.url(), fileName: path.basename(target), path: target, bytes: size };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A data: URL of a plain page announcing the saved files, shown in place of the page that started them. */
export function downloadNoticeUrl(saved: readonly SavedDownload[]): string {
  const items = saved
    .map(
      (d) =>
        `<li><b>${escapeHtml(d.fileName)}</b> (${d.bytes} bytes) saved to <code>${escapeHtml(d.path)}</code>` +
        `<br><small>from ${escapeHtml(d.url)}</small></li>`,
    )
    .join('');
  const html =
    '<!doctype html><html><head><meta charset="utf-8"><title>Download complete</title></head>' +
    '<body style="font:16px sans-serif;margin:40px"><h1>Download complete</h1>' +
    `<p>The browser downloaded ${saved.length === 1 ? 'a file' : `${saved.length} files`}:</p><ul>${items}</ul>` +
    '<p>Go back to return to the previous page.</p></body></html>';
  return `data:text/html;base64,${Buffer.from(html, 'utf8').toString('base64')}`;
}
