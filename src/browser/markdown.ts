// Page text for read_page_answer_question: HTML through turndown; a PDF through its text layer, else its file.
import TurndownService from 'turndown';
import { extractText, getDocumentProxy } from 'unpdf';
import type { APIRequestContext, Page } from 'playwright';
import { PageTextError } from './errors';
import { readPdfSignals, readPdfTextLayer } from './pageScripts';
import type { PdfSignals } from './pageScripts';

/** Below this many characters a PDF text layer is taken to be missing and the file is read instead. */
export const PDF_TEXT_LAYER_MIN_CHARS = 100;

export function isPdf(signals: PdfSignals): boolean {
  return signals.urlSuffix || signals.contentType || signals.embed !== null || signals.viewer;
}

let turndown: TurndownService | undefined;

function converter(): TurndownService {
  if (turndown) return turndown;
  turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'canvas', 'head']);
  return turndown;
}

/** HTML → markdown, with runs of blank lines collapsed. */
export function htmlToMarkdown(html: string): string {
  return converter()
    .turndown(html)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Extracts the text of PDF bytes, pages joined. */
export async function pdfBytesToText(bytes: Uint8Array): Promise<string> {
  const pdf = await getDocumentProxy(bytes);
  const { text } = await extractText(pdf, { mergePages: true });
  return text.trim();
}

async function fetchPdf(request: APIRequestContext, url: string): Promise<Uint8Array> {
  const response = await request.get(url, { timeout: 30_000 });
  if (!response.ok()) throw new PageTextError(`Downloading the PDF at ${url} failed with HTTP ${response.status()}.`);
  return new Uint8Array(await response.body());
}

/** Markdown of what the page shows; PDFs are read from the viewer's text layer or, failing that, from the file. */
export async function pageMarkdown(page: Page): Promise<string> {
  const signals = await page.evaluate(readPdfSignals);
  if (!isPdf(signals)) return htmlToMarkdown(await page.evaluate(() => document.documentElement.outerHTML));
  const layer = await page.evaluate(readPdfTextLayer);
  if (layer.length >= PDF_TEXT_LAYER_MIN_CHARS) return layer;
  const url = signals.embed ? signals.embed : page.url();
  try {
    return await pdfBytesToText(await fetchPdf(page.context().request, url));
  } catch (error) {
    if (error instanceof PageTextError) throw error;
    throw new PageTextError(`Could not read the PDF at ${url}.`, { cause: error });
  }
}
