// The desktop's network mode 'policy', on real Xvfb and bubblewrap: the sandbox keeps its own empty network
// namespace and its only way out is the session's egress proxy, which applies the URL policy. Programs that honour the
// proxy variables (Python's urllib, curl, Chromium) reach a page on the host when the policy allows it and get the
// proxy's 403 "Blocked by policy" when it does not; a direct connection, a name lookup, or talking to the proxy's
// socket by hand gets nothing more; closing the session leaves no socket, directory or process behind.
import { existsSync } from 'node:fs';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_PROXY_URL, desktopSupport } from '../../src/desktop';
import type { DesktopSession } from '../../src/desktop';
import { DEFAULT_URL_POLICY, narrow } from '../../src/contract/url-policy';
import { openSession, pidNamespace, processesIn } from '../fixtures/desktop/helpers';

const support = desktopSupport();
const MARKER = `cua-desktop-network-${process.pid}`;

/** Fetches argv[1] with urllib (which honours http_proxy); prints the status and the body, also of an error. */
const FETCH = String.raw`
import sys, urllib.request, urllib.error
try:
    answer = urllib.request.urlopen(sys.argv[1], timeout=10)
    print(answer.status, answer.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())`;

/** Asks the proxy for a CONNECT tunnel to argv[1] (host:port); prints its status line. */
const CONNECT = String.raw`
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (sys.argv[1], sys.argv[1])).encode())
print(s.recv(200).decode().splitlines()[0])`;

/** Sends a GET for argv[1] straight to the proxy's socket, bypassing the relay; prints the status line. */
const VIA_SOCKET = String.raw`
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect("/run/cua/proxy.sock")
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % sys.argv[1]).encode())
print(s.recv(200).decode().splitlines()[0])`;

/** Connects to 127.0.0.1:argv[1] directly, ignoring the proxy variables. */
const DIRECT = String.raw`
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
    print("connected")
except OSError as e:
    print("failed:", e)`;

const python = (script: string, ...args: string[]): string => `python3 -c '${script}' ${args.join(' ')}`;

describe.skipIf(!support.ok)("desktop network 'policy'", () => {
  let scratch: string;
  let server: http.Server;
  let port: number;
  let page: string;
  const requests: string[] = [];
  let allowed: DesktopSession;
  let deniedHost: DesktopSession;
  let deniedPrivate: DesktopSession;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'cua-desk-net-test-'));
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>${MARKER}</title><p>${MARKER}</p>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    page = `http://127.0.0.1:${port}/page`;
    const open = (name: string, urlPolicy = DEFAULT_URL_POLICY): Promise<DesktopSession> =>
      openSession({ homeDir: path.join(scratch, name), apps: [], network: 'policy', urlPolicy });
    [allowed, deniedHost, deniedPrivate] = await Promise.all([
      open('allowed'),
      open('denied-host', narrow(DEFAULT_URL_POLICY, { denyHosts: ['127.0.0.1'] })),
      open('denied-private', narrow(DEFAULT_URL_POLICY, { denyPrivateAddresses: true })),
    ]);
  });

  afterAll(async () => {
    await Promise.all([allowed, deniedHost, deniedPrivate].map((s) => s?.close()));
    await new Promise((resolve) => server?.close(resolve));
    await rm(scratch, { recursive: true, force: true });
  });

  it('has only a loopback, and proxy variables pointing at the relay on it', async () => {
    const interfaces = await allowed.runCommand('tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "');
    expect(interfaces.output).toBe('lo\n');
    const env = await allowed.runCommand('env | grep -i _proxy= | sort');
    expect(env.output.split('\n').filter(Boolean)).toEqual([
      `HTTPS_PROXY=${SANDBOX_PROXY_URL}`,
      `HTTP_PROXY=${SANDBOX_PROXY_URL}`,
      'NO_PROXY=<-loopback>',
      `http_proxy=${SANDBOX_PROXY_URL}`,
      `https_proxy=${SANDBOX_PROXY_URL}`,
      'no_proxy=<-loopback>',
    ]);
  });

  it('reaches a page on the host through the proxy when the policy allows it', async () => {
    const before = requests.length;
    const result = await allowed.runCommand(python(FETCH, page));
    expect(result.output).toBe(`200 <title>${MARKER}</title><p>${MARKER}</p>\n`);
    expect(requests.slice(before)).toEqual(['/page']);
    const tunnel = await allowed.runCommand(python(CONNECT, `127.0.0.1:${port}`));
    expect(tunnel.output).toBe('HTTP/1.1 200 Connection Established\n');
  });

  it.each([
    ['denyHosts 127.0.0.1', () => deniedHost, /host 127\.0\.0\.1:\d+ is denied \(denyHosts 127\.0\.0\.1\)/],
    ['denyPrivateAddresses', () => deniedPrivate, /127\.0\.0\.1 is a loopback address \(denyPrivateAddresses\)/],
  ])('answers 403 "Blocked by policy" under %s, and the server sees nothing', async (_name, session, reason) => {
    const before = requests.length;
    const result = await session().runCommand(python(FETCH, page));
    expect(result.output).toMatch(/^403 .*<h1>Blocked by policy<\/h1>/);
    expect(result.output).toMatch(reason);
    const tunnel = await session().runCommand(python(CONNECT, `127.0.0.1:${port}`));
    expect(tunnel.output).toBe('HTTP/1.1 403 Forbidden\n');
    const bySocket = await session().runCommand(python(VIA_SOCKET, page));
    expect(bySocket.output).toBe('HTTP/1.1 403 Forbidden\n');
    expect(requests.length).toBe(before);
  });

  it('has no other way out: direct connections and name lookups fail', async () => {
    const before = requests.length;
    const direct = await allowed.runCommand(python(DIRECT, String(port)));
    expect(direct.output).toMatch(/^failed: .*Connection refused/);
    const viaBash = await allowed.runCommand(`bash -c 'echo hi > /dev/tcp/127.0.0.1/${port}'`);
    expect(viaBash.exitCode).not.toBe(0);
    const lookup = await allowed.runCommand(python('import socket; socket.getaddrinfo("example.com", 80)'), {
      timeoutMs: 15_000,
    });
    expect(lookup.exitCode).not.toBe(0);
    expect(requests.length).toBe(before);
  });

  it('lets Chromium (no flags needed) load the page through the proxy, and shows the refusal', async () => {
    const dump = (session: DesktopSession): Promise<string> =>
      session
        .runCommand(`chromium --headless --dump-dom ${page} 2>/dev/null`, { timeoutMs: 20_000 })
        .then((r) => r.output);
    expect(await dump(allowed)).toContain(`<p>${MARKER}</p>`);
    expect(await dump(deniedHost)).toContain('Blocked by policy');
  });

  it('stops the proxy and the relay with the session and leaves no socket or directory', async () => {
    const session = await openSession({ homeDir: path.join(scratch, 'closing'), apps: [], network: 'policy' });
    const socket = session.proxySocket ?? '';
    const namespace = pidNamespace(session.processes().sandboxInit) ?? 'gone';
    expect(existsSync(socket)).toBe(true);
    expect(processesIn(namespace).length).toBeGreaterThanOrEqual(2); // init and the relay at least
    await session.close();
    expect(existsSync(socket)).toBe(false);
    expect(existsSync(path.dirname(socket))).toBe(false);
    expect(processesIn(namespace)).toEqual([]);
  });
});
