// Writing a run's trajectory report: read the run folder, re-encode its screenshots as WebP data: URIs (full
// resolution, so markers stay exact; a fraction of the PNG size), render the page and write it atomically.
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { readRun } from '../trajectory/reader';
import { renderTrajectoryHtml } from './html';
import { preScreenshots } from './decisions';
import type { Size } from './markers';
import { buildTrajectoryView } from './model';

/** Name of the report in a run folder when no other file is given. */
export const REPORT_FILE = 'report.html';

/** The run's request journal (src/browser/request-journal.ts), read for what approval questions held. */
const REQUEST_JOURNAL = 'requests.jsonl';

/** WebP quality of embedded screenshots: text stays crisp, files stay small. */
export const SCREENSHOT_QUALITY = 80;

/** The report file could not be written. */
export class ReportWriteError extends Error {
  constructor(
    readonly file: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? options.cause.message : String(options?.cause ?? '');
    super(`cannot write ${file}: ${detail}`, options);
    this.name = new.target.name;
  }
}

export interface ReportResult {
  /** Absolute path of the written file. */
  file: string;
  /** Number of steps shown: desktop steps, not their tool calls; decisions superseded after a lost worker not counted. */
  steps: number;
  /** Size of the file in bytes. */
  bytes: number;
}

interface EncodedImage extends Size {
  dataUrl: string;
}

/** A screenshot as a WebP data: URI with its pixel size, or undefined when the file is missing or unreadable. */
async function encodeScreenshot(file: string): Promise<EncodedImage | undefined> {
  try {
    const png = await fs.readFile(file);
    const { data, info } = await sharp(png).webp({ quality: SCREENSHOT_QUALITY }).toBuffer({ resolveWithObject: true });
    return { width: info.width, height: info.height, dataUrl: `data:image/webp;base64,${data.toString('base64')}` };
  } catch {
    return undefined;
  }
}

/** Inside the run folder only: a screenshot path that climbs out of it is not read. */
function insideFolder(dir: string, relative: string): string | undefined {
  const file = path.resolve(dir, relative);
  return file.startsWith(dir + path.sep) ? file : undefined;
}

/** The report page of the run folder `runFolder` as a string, with its step count. */
export async function renderTrajectoryReport(runFolder: string): Promise<{ html: string; steps: number }> {
  const dir = path.resolve(runFolder);
  const run = await readRun(dir);
  const encoded = new Map<string, EncodedImage>();
  for (const shot of new Set(preScreenshots(run.events))) {
    const file = shot ? insideFolder(dir, shot) : undefined;
    const image = file ? await encodeScreenshot(file) : undefined;
    if (image) encoded.set(shot, image);
  }
  const requestJournal = await fs.readFile(path.join(dir, REQUEST_JOURNAL), 'utf8').catch(() => '');
  const view = buildTrajectoryView({ ...run, requestJournal }, (shot) => encoded.get(shot));
  const decisions = view.steps.flatMap((s) => [...s.supersededDecisions, s]);
  const missing = decisions.filter((s) => s.screenshot !== '' && !encoded.has(s.screenshot));
  for (const s of missing) view.warnings.push(`step ${s.number}: screenshot ${s.screenshot} is missing or unreadable`);
  const dataUrls = new Map([...encoded].map(([shot, image]) => [shot, image.dataUrl]));
  return { html: renderTrajectoryHtml(view, dataUrls), steps: view.steps.length };
}

/**
 * Write the trajectory report of `runFolder` to `outFile` (default `<runFolder>/report.html`).
 * Throws RunFolderNotFoundError / CorruptFileError for a missing or damaged run, ReportWriteError when the file
 * cannot be written.
 */
export async function writeTrajectoryReport(runFolder: string, outFile?: string): Promise<ReportResult> {
  const { html, steps } = await renderTrajectoryReport(runFolder);
  const file = path.resolve(outFile ?? path.join(runFolder, REPORT_FILE));
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(temp, html, 'utf8');
    await fs.rename(temp, file);
  } catch (cause) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw new ReportWriteError(file, { cause });
  }
  return { file, steps, bytes: Buffer.byteLength(html, 'utf8') };
}
