// The Fara run folder of test/fixtures/trajectory/fara_waiting (a click, then the question which city; status
// waiting_for_user) as Fara would have written it against a running fixture site: a copy whose URLs are the site's.
// Used by the adoption test and by scripts/record-histories.ts. No vitest import here.
import fs from 'node:fs';
import path from 'node:path';

export const FARA_WAITING_FIXTURE = path.resolve(__dirname, '../fixtures/trajectory/fara_waiting');
/** The site the fixture's events name (its own URLs, without a port). */
const FIXTURE_SITE = 'http://127.0.0.1/';

/** Copies the fixture to `dir` with `siteUrl` (no trailing slash) for its site, and `status` in status.json if given. */
export function copyFaraFolder(dir: string, siteUrl: string, status?: object): string {
  fs.cpSync(FARA_WAITING_FIXTURE, dir, { recursive: true });
  for (const file of ['task.json', 'data_point.json', 'solver_log/events.jsonl']) {
    const p = path.join(dir, file);
    fs.writeFileSync(p, fs.readFileSync(p, 'utf8').replaceAll(FIXTURE_SITE, `${siteUrl}/`));
  }
  if (status) fs.writeFileSync(path.join(dir, 'solver_log/status.json'), JSON.stringify(status));
  return dir;
}
