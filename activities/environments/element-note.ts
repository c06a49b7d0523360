// The browser act's element record (src/browser/element-record.ts): taken just before a pointer or typing action and
// kept in the step's tool output metadata only (never in the activity's result, so never in workflow history, and
// never in the model's prompt). Every string passes the worker's secret redaction first.
import type { PerformedAction } from '../../src/agent/observations';
import { knownSecretValues, redactSecrets } from '../../src/agent/secrets';
import type { BrowserEnvironment } from '../../src/browser/environment';
import { elementProbeOf, readElement } from '../../src/browser/element-record';
import type { ElementNote } from '../../src/browser/element-record';
import type { CoordinateSpace, Viewport } from '../../src/coords/viewport';
import type { Config } from '../../src/runtime/config';

/** Records the element an action is about to act on; undefined for an action that acts on none. Never throws. */
export function elementRecorder(
  config: Config,
  env: BrowserEnvironment,
  screen: { space: CoordinateSpace; viewport: Viewport },
): (action: PerformedAction) => Promise<ElementNote | undefined> {
  return async (action) => {
    const probe = elementProbeOf(action);
    if (!probe) return undefined;
    const secrets = knownSecretValues(config.secrets ?? {}, process.env);
    return readElement(env.page, probe, { ...screen, redact: (text) => redactSecrets(text, secrets) });
  };
}
