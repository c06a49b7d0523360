// Downloads: save the file into the run's downloads folder and build the page that tells the agent where it went.
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Download } from 'playwright';

export type SavedDownload = { url: string; fileName: string; path: string; bytes: number };

function safeName(name: string): string {
  const cleaned = path
    .basename(name)
    .replace(/[^\w.\- ()]/g, '_')
    .trim();
  return cleaned.length > 0 ? cleaned : 'download';
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

/** Saves a finished download into `dir` under its suggested name (numbered if taken). */
export async function saveDownload(download: Download, dir: string): Promise<SavedDownload> {
  await mkdir(dir, { recursive: true });
  const target = await freePath(dir, safeName(download.suggestedFilename()));
  await download.saveAs(target);
  const { size } = await stat(target);
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
