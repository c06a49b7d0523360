// The addresses of the control plane a worker knows from its configuration, and the URL policy its browsers and the
// desktop sandbox's proxy get with them denied (src/policy/control-plane.ts). What runs and watches the agent must not
// be something the agent can open: a page's injected text could otherwise steer the model to the Temporal Web UI
// (every task of the namespace, with buttons to signal, cancel and terminate them), the console or the codec server.
import { denyControlPlane, isLoopbackHost, parseAddress } from '../policy/control-plane';
import { DEFAULT_URL_POLICY } from '../contract/url-policy';
import type { UrlPolicy } from '../contract/url-policy';
import type { Config } from './config';

/** Where cua's own servers listen on loopback unless told otherwise: console, MCP, codec server, a local Jaeger UI. */
export const LOCAL_CONTROL_PLANE_DEFAULTS = ['127.0.0.1:8300', '127.0.0.1:8310', '127.0.0.1:8888', '127.0.0.1:16686'];
/** `temporal server start-dev` (and so `cua server`, `cua dev`, the demo) serves its Web UI at the frontend port + 1000. */
const DEV_UI_PORT_OFFSET = 1000;

type ControlPlaneConfig = Pick<Config, 'temporal' | 'console' | 'telemetry' | 'controlPlane'>;

/**
 * Every control-plane address the configuration names: the Temporal frontend (and, on loopback, the dev server's Web
 * UI beside it), the console's Temporal UI link, the metrics endpoint, the trace receiver, cua's own servers' loopback
 * defaults, and `controlPlane.addresses`.
 */
export function controlPlaneAddresses(config: ControlPlaneConfig): string[] {
  const out = [config.temporal.address];
  const frontend = parseAddress(config.temporal.address);
  if (frontend && isLoopbackHost(frontend.host)) {
    out.push(`${frontend.host}:${frontend.port + DEV_UI_PORT_OFFSET}`);
  }
  if (config.console?.temporalUiUrl) out.push(config.console.temporalUiUrl);
  if (config.telemetry?.metrics?.prometheus) out.push(config.telemetry.metrics.prometheus);
  if (config.telemetry?.traces?.otlpEndpoint) out.push(config.telemetry.traces.otlpEndpoint);
  out.push(...LOCAL_CONTROL_PLANE_DEFAULTS, ...(config.controlPlane?.addresses ?? []));
  return [...new Set(out)];
}

/** The worker's URL policy as its browsers and desktop proxy apply it: the configured one, control plane denied. */
export function workerUrlPolicy(config: ControlPlaneConfig & Pick<Config, 'urlPolicy'>): UrlPolicy {
  const policy = config.urlPolicy ?? DEFAULT_URL_POLICY;
  if (config.controlPlane?.reachable) return policy;
  return denyControlPlane(policy, controlPlaneAddresses(config));
}

/** `config` with more control-plane addresses (a server a command started beside its worker). */
export function withControlPlane<C extends Pick<Config, 'controlPlane'>>(config: C, addresses: readonly string[]): C {
  const known = config.controlPlane?.addresses ?? [];
  return {
    ...config,
    controlPlane: { reachable: false, ...config.controlPlane, addresses: [...new Set([...known, ...addresses])] },
  };
}

/** One line for the worker's start: what its browsers and desktop proxy are denied of the control plane. */
export function controlPlaneSummary(config: ControlPlaneConfig): string {
  if (config.controlPlane?.reachable) return 'control plane: reachable by the agent (controlPlane.reachable)';
  return `control plane denied to the agent's browsers: ${controlPlaneAddresses(config).join(', ')} (docs/security.md)`;
}
