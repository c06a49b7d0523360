// Runs once before the test files: on a fresh clone after a plain `npm install`, installs the Temporal CLI,
// the time-skipping test server, Chromium and the desktop's X programs (scripts/setup.sh) so that `npm test` works
// on its own.
import { ensureTools } from '../src/infra/tools';

export default function setup(): void {
  ensureTools((line) => console.log(`[test setup] ${line}`), { desktop: true, python: true });
}
