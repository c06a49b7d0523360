// Navigation helpers: URLs the agent types, search URLs, and reading Playwright's navigation failures.

import { webSearchUrl } from '../model/urls';

/** The default search engine's results page (the same template the agent's web_search uses). */
export function bingSearchUrl(query: string): string {
  return webSearchUrl(query);
}

/** Adds https:// to a bare host; URLs with a known scheme pass through (for the URL policy to judge). */
export function normalizeUrl(url: string): string {
  const trimmed = url.trim();
  const known = /^(https?|file|about|data|javascript|chrome|chrome-extension|view-source|blob|filesystem|ftp|wss?):/i;
  return known.test(trimmed) ? trimmed : `https://${trimmed}`;
}

/** Playwright's way of saying a navigation turned into a download. */
export function isDownloadStart(error: unknown): boolean {
  return error instanceof Error && /Download is starting|net::ERR_ABORTED/.test(error.message);
}

/** A navigation cut short by the page itself redirecting (not by Chromium's error page). */
export function isInterrupted(error: unknown): boolean {
  return error instanceof Error && /is interrupted by another navigation to "(?!chrome-error:)/.test(error.message);
}

export function firstLine(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error);
}
