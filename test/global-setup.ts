// Runs once before the test files: on a fresh clone after a plain `npm install`, sets up everything the tests use
// (scripts/setup.sh's parts: the Temporal CLI and Chromium, the desktop's X programs, the test server and Python
// pieces, and the cluster pieces built from Go), so that `npm test` works on its own and no test hook waits for a
// build. A machine that cannot build the cluster pieces (no Go) still runs the rest: the S3 store's and cluster
// tests then fail saying what is missing.
import { ensureTools, SetupFailedError } from '../src/infra/tools';

export default function setup(): void {
  const log = (line: string) => console.log(`[test setup] ${line}`);
  ensureTools(log, ['demo', 'desktop', 'tests']);
  try {
    ensureTools(log, ['cluster']);
  } catch (err) {
    if (!(err instanceof SetupFailedError)) throw err;
    log(`WARNING: ${err.message} The S3 store's and the cluster's tests will fail on it.`);
  }
}
