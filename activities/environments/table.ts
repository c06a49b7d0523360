// The environment table: which driver serves a task's environment (open, decide) and which one a session id belongs
// to (observe, act, release). The one place an environment is chosen: a new built-in one is its driver file and one
// line in BUILT_IN.
import { UnknownSessionError } from '../../src/browser/errors';
import type { ActivityDeps, RunFiles } from '../support';
import { createBrowserDriver } from './browser';
import { createCustomDriver } from './custom';
import { createDesktopDriver } from './desktop';
import type { DriverFactory, EnvironmentDriver } from './driver';

/** The built-in environments' drivers, by the name a task gives in `environment`. */
const BUILT_IN: Record<string, DriverFactory> = {
  browser: createBrowserDriver,
  desktop: createDesktopDriver,
};
/** Any other name is an environment an application brought (src/environments/plugin.ts). */
const BROUGHT: DriverFactory = createCustomDriver;

export interface Environments {
  /** The driver of a task's environment (open, decide). */
  forTask(environment: string): EnvironmentDriver;
  /** The driver a session was opened by (observe, act, release): the longest session prefix the id starts with. */
  forSession(sessionId: string): EnvironmentDriver;
}

/** The drivers of one activities object, each built once (the custom one holds its open sessions). */
export function createEnvironments(deps: ActivityDeps, files: RunFiles): Environments {
  const brought = BROUGHT(deps, files);
  const builtIn = new Map(Object.entries(BUILT_IN).map(([name, create]) => [name, create(deps, files)]));
  const byPrefix = [...builtIn.values(), brought].sort((a, b) => b.sessionPrefix.length - a.sessionPrefix.length);
  return {
    forTask: (environment) => builtIn.get(environment) ?? brought,
    forSession(sessionId) {
      const driver = byPrefix.find((d) => sessionId.startsWith(d.sessionPrefix));
      // Unreachable while the browser's prefix is '' (it takes every id no other driver's prefix claims).
      if (!driver) throw new UnknownSessionError(`No environment opens sessions like ${sessionId}.`);
      return driver;
    },
  };
}
