// The Temporal server's config folder for the one-machine cluster (src/infra/cluster.ts): a port for each service, the
// static config (PostgreSQL for both stores, every service on 127.0.0.1) and the dynamic config switching on what our
// workflows use.
import fs from 'node:fs';
import path from 'node:path';
import { ClusterError, DB_USER } from './cluster-postgres';
import { canListen, freePort } from './devserver';

export interface Ports {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: [number, number, number, number];
}

/**
 * Ports for the services. Membership ports are stored in a smallint column (cluster_membership.rpc_port), so they
 * must stay below 32768, under the range the kernel hands out for "any free port": they are drawn at random there.
 */
export async function pickPorts(frontend: number | undefined): Promise<Ports> {
  const taken = new Set<number>(frontend ? [frontend] : []);
  const next = async (low?: boolean): Promise<number> => {
    for (let attempt = 0; ; attempt++) {
      const p = low ? 20_000 + Math.floor(Math.random() * 12_000) : await freePort();
      if (!taken.has(p) && (!low || (await canListen(p)))) {
        taken.add(p);
        return p;
      }
      if (attempt > 200) throw new ClusterError('cannot find free ports for the Temporal server');
    }
  };
  return {
    frontend: frontend ?? (await next()),
    frontendHttp: await next(),
    history: await next(),
    matching: await next(),
    worker: await next(),
    membership: [await next(true), await next(true), await next(true), await next(true)],
  };
}

/** The server's static config: PostgreSQL for both stores, every service on 127.0.0.1 on its own port. */
function serverConfig(ports: Ports, pgPort: number, dynamicConfig: string): string {
  const store = (db: string, conns: number) => `
      sql:
        pluginName: "postgres12"
        databaseName: "${db}"
        connectAddr: "127.0.0.1:${pgPort}"
        connectProtocol: "tcp"
        user: "${DB_USER}"
        password: "${DB_USER}"
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: "1h"`;
  const service = (grpc: number, membership: number, http?: number) => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${http ? `\n      httpPort: ${http}` : ''}`;
  return `# Written by src/infra/cluster.ts: a one-machine Temporal cluster on PostgreSQL.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:${store('temporal', 20)}
    postgres-visibility:${store('temporal_visibility', 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
services:
  frontend:${service(ports.frontend, ports.membership[0], ports.frontendHttp)}
  history:${service(ports.history, ports.membership[1])}
  matching:${service(ports.matching, ports.membership[2])}
  worker:${service(ports.worker, ports.membership[3])}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${ports.frontend}"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "${dynamicConfig}"
  pollInterval: "10s"
`;
}

/** What our workflows use, switched on explicitly (updates carry replies; search attributes are seen at once). */
const DYNAMIC_CONFIG = `# Written by src/infra/cluster.ts
frontend.enableUpdateWorkflowExecution:
  - value: true
frontend.enableExecuteMultiOperation:
  - value: true
system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
limit.maxIDLength:
  - value: 255
history.timerProcessorMaxTimeShift:
  - value: 100ms
`;

/** Writes the server's config folder (the static config and the dynamic config it names). */
export function writeServerConfig(dir: string, ports: Ports, postgresPort: number): void {
  const configDir = path.join(dir, 'config');
  fs.mkdirSync(configDir, { recursive: true });
  const dynamicConfig = path.join(configDir, 'dynamicconfig.yaml');
  fs.writeFileSync(dynamicConfig, DYNAMIC_CONFIG);
  fs.writeFileSync(path.join(configDir, 'cluster.yaml'), serverConfig(ports, postgresPort, dynamicConfig));
}
