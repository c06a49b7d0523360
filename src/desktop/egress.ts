// The desktop's only way out in network mode 'policy'. The sandbox keeps its own empty network namespace; the session
// runs an egress proxy (src/browser/egress-proxy.ts) on the host, listening on a UNIX socket in a private directory
// (0700) that the sandbox sees at /run/cua/proxy.sock; inside, a small relay (python3) listens on the sandbox's own
// 127.0.0.1:3128 and hands each connection to that socket, and the proxy variables of the sandbox's environment point
// there. A program that ignores them finds no route, no DNS and no other socket: it cannot get out.
//
// The proxy applies the worker's URL policy narrowed by the task's, with the rules of src/policy: it cannot tell a
// page from its images, so every connection meets every rule (schemes, allowHosts, denyHosts, private addresses after
// DNS). As for the browser, it resolves a host once and connects to exactly the address it checked (no DNS
// rebinding). HTTPS arrives as CONNECT tunnels whose content it does not see.
//
// Under a root worker, the sandbox is an unprivileged host user (sandbox.ts): the directory and the socket are then
// chowned to that user, who must reach the socket (bwrap binds it as that user) and connect to it.
import type { ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEgressProxy } from '../browser/egress-proxy';
import type { EgressProxy } from '../browser/egress-proxy';
import { egressDecision } from '../browser/policy-guard';
import { HostResolver } from '../policy/resolve';
import type { UrlPolicy } from '../contract/url-policy';
import { stopChild, tailLines, waitForLine } from './child';
import { DesktopUnavailableError, SandboxError } from './errors';
import { SANDBOX_PROXY_PORT, SANDBOX_PROXY_SOCKET } from './sandbox';
import type { HostUser, Sandbox } from './sandbox';

/** The relay's interpreter, inside the sandbox (the system's, bound read-only from the host). */
export const RELAY_PYTHON = '/usr/bin/python3';
const RELAY_READY = '__cua_relay_ready__';

/**
 * The relay: TCP on 127.0.0.1:<port> in the sandbox to the proxy's UNIX socket, byte for byte, each direction
 * half-closed on its own end of file. Arguments: socket path, port, ready mark.
 */
export const RELAY_SCRIPT = `
import asyncio, sys
SOCKET, PORT, READY = sys.argv[1], int(sys.argv[2]), sys.argv[3]
async def pipe(reader, writer, other):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except Exception:
        writer.close()
        other.close()
async def serve(client_reader, client_writer):
    try:
        proxy_reader, proxy_writer = await asyncio.open_unix_connection(SOCKET)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, proxy_writer, client_writer), pipe(proxy_reader, client_writer, proxy_writer))
    client_writer.close()
    proxy_writer.close()
async def main():
    server = await asyncio.start_server(serve, '127.0.0.1', PORT)
    print(READY, flush=True)
    await server.serve_forever()
asyncio.run(main())
`;

export class DesktopEgress {
  private relay: ChildProcess | undefined;

  private constructor(
    /** The private directory holding the socket; removed on close. */
    private readonly dir: string,
    private readonly proxy: EgressProxy,
    /** The proxy's socket on the host, to be bound into the sandbox. */
    readonly socketPath: string,
  ) {}

  /**
   * Starts the session's proxy on a socket in a fresh private directory (0700), both handed to `hostUser` when the
   * sandbox runs as one.
   */
  static async start(policy: UrlPolicy, log?: (line: string) => void, hostUser?: HostUser): Promise<DesktopEgress> {
    if (!existsSync(RELAY_PYTHON)) {
      throw new DesktopUnavailableError(`network 'policy' needs ${RELAY_PYTHON} (apt-get install python3)`);
    }
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cua-desk-net-'));
    const socketPath = path.join(dir, 'proxy.sock');
    const resolver = new HostResolver();
    try {
      const proxy = await startEgressProxy({
        decide: (url) => egressDecision(policy, resolver, url, 'document'),
        onBlocked: (url, reason) => log?.(`[desktop egress] refused ${url}: ${reason}`),
        listen: { path: socketPath },
      });
      if (hostUser) {
        try {
          await chown(dir, hostUser.uid, hostUser.gid);
          await chown(socketPath, hostUser.uid, hostUser.gid);
        } catch (err) {
          await proxy.close().catch(() => undefined);
          throw err;
        }
      }
      return new DesktopEgress(dir, proxy, socketPath);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw new SandboxError(`the desktop's egress proxy did not start: ${String(err)}`, { cause: err });
    }
  }

  /**
   * Starts the relay inside the sandbox and waits until it listens. It dies with the sandbox; it is the sandbox
   * user's process, so a command can kill it, which only cuts the sandbox's own way out.
   */
  async startRelay(sandbox: Sandbox, timeoutMs: number, log?: (line: string) => void): Promise<void> {
    const argv = [RELAY_PYTHON, '-c', RELAY_SCRIPT, SANDBOX_PROXY_SOCKET, String(SANDBOX_PROXY_PORT), RELAY_READY];
    const relay = sandbox.spawnInside(argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.relay = relay;
    const said = tailLines(relay.stderr, '[desktop egress relay]', log);
    relay.once('exit', (code, sig) => log?.(`[desktop egress relay] ended (${code ?? sig})`));
    try {
      await waitForLine(relay, relay.stdout, RELAY_READY, timeoutMs);
    } catch (err) {
      await stopChild(relay, 500);
      const why = err instanceof Error ? err.message : String(err);
      const output = said().slice(-3).join(' | ');
      throw new SandboxError(`the egress relay did not start: ${why}${output ? ` (it said: ${output})` : ''}`, {
        cause: err,
      });
    }
    log?.(`[desktop egress] ${SANDBOX_PROXY_SOCKET} relayed at 127.0.0.1:${SANDBOX_PROXY_PORT} in the sandbox`);
  }

  /** Stops the proxy (open tunnels too) and removes its directory. Never throws. */
  async close(): Promise<void> {
    if (this.relay) await stopChild(this.relay, 500);
    await this.proxy.close().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }

  /** Synchronous last resort for process exit hooks: the proxy ends with this process; its directory goes now. */
  killNow(): void {
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch {
      // nothing left to do
    }
  }
}
