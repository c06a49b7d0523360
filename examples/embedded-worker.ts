// A worker hosted inside an application's own process: its configuration is an object the application builds (no
// cua.config.json), and its model endpoints come from the application's own resolver — here, one endpoint per
// tenant, with each tenant's key loaded once at start-up. The resolver's keys obey the same rule as configured ones:
// a key goes only to the base URL returned with it, so a task that overrides the base URL gets no key.
//
//   TEMPORAL_ADDRESS=127.0.0.1:7233 TENANT_ACME_KEY=sk-... npx tsx examples/embedded-worker.ts
import { runAgentWorker } from 'durable-cua/worker';
import type { ModelEndpoint, ModelEndpointResolver } from 'durable-cua/worker';

/** Where each tenant's tasks think: in a real application this comes from its database or secret store. */
const TENANTS: Record<string, ModelEndpoint> = {
  acme: { baseUrl: 'http://gpu-acme:8000/v1', model: 'microsoft/Fara-7B', apiKey: process.env.TENANT_ACME_KEY ?? '' },
  globex: {
    baseUrl: 'https://globex.openai.azure.com/openai/v1',
    model: 'fara',
    apiKey: process.env.TENANT_GLOBEX_KEY,
  },
};

/**
 * Task ids start with the tenant (`acme-…`, given as `id` to `start()`): the tenant's endpoint for the task's
 * default endpoint; other names (the desktop's vision and grounding endpoints) fall back to `config.models`.
 */
const perTenant: ModelEndpointResolver = ({ name, taskId }) => {
  if (name !== 'default') return undefined;
  const tenant = taskId.split('-')[0] ?? '';
  return TENANTS[tenant];
};

export async function main(): Promise<void> {
  await runAgentWorker({
    config: {
      temporal: { address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233', namespace: 'default' },
      taskQueue: 'cua-agent',
      runsDir: './agent-runs',
      browser: { headless: true, slots: 4 },
      desktop: { slots: 0 }, // browser tasks only in this process
      // Tasks may not point their model anywhere else: each tenant's endpoint is the only one.
      modelOverrides: { allow: false },
      urlPolicy: { schemes: ['https'], denyPrivateAddresses: true },
    },
    modelEndpoints: perTenant,
    log: (line) => console.log(`[agent worker] ${line}`),
    // Ctrl-C / SIGTERM drain running activities and close the browsers (handleSignals defaults to true).
  });
}

if (require.main === module) void main();
