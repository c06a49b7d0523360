// The URL policy as a specification: which URLs each policy allows, how a task narrows a worker's policy (never
// wider), host patterns, non-public address ranges (IPv4, IPv6, the forms that embed IPv4), and the DNS rule.
import { describe, expect, it } from 'vitest';
import { nonPublicRange, parseIPv6 } from '../../src/common/addresses';
import { HostResolver } from '../../src/policy/resolve';
import {
  checkUrl,
  DEFAULT_URL_POLICY,
  narrow,
  remoteBrowserGaps,
  restrictsWeb,
  TaskUrlPolicySchema,
  UrlPolicySchema,
  WIDEST_URL_POLICY,
} from '../../src/contract/url-policy';
import type { LoadKind, UrlPolicy, UrlPolicyInput } from '../../src/contract/url-policy';
import { resolveVisitUrl } from '../../src/model/urls';
import { TaskInputSchema } from '../../src/contract/task';

const policy = (input: UrlPolicyInput = {}): UrlPolicy => UrlPolicySchema.parse(input);
const PRIVATE = policy({ denyPrivateAddresses: true });

describe('checkUrl', () => {
  it.each<[string, UrlPolicy, string, true | RegExp]>([
    ['http and https by default', DEFAULT_URL_POLICY, 'https://example.com/a?b=1', true],
    ['loopback stays allowed by default (demo, tests)', DEFAULT_URL_POLICY, 'http://127.0.0.1:8080/', true],
    ['about:blank always', policy({ schemes: ['https'] }), 'about:blank', true],
    ['other about: pages never', DEFAULT_URL_POLICY, 'about:settings', /only about:blank/],
    ['file: refused by default', DEFAULT_URL_POLICY, 'file:///etc/hostname', /file: URLs are not allowed/],
    ['file: with allowFile', policy({ allowFile: true }), 'file:///etc/hostname', true],
    ['javascript:', DEFAULT_URL_POLICY, 'javascript:alert(1)', /the javascript: scheme is not allowed/],
    ['data:', DEFAULT_URL_POLICY, 'data:text/html,<h1>hi</h1>', /the data: scheme is not allowed/],
    ['chrome:', DEFAULT_URL_POLICY, 'chrome://settings', /the chrome: scheme/],
    ['view-source:', DEFAULT_URL_POLICY, 'view-source:file:///etc/hostname', /the view-source: scheme/],
    ['https only refuses http', policy({ schemes: ['https'] }), 'http://example.com/', /the http: scheme/],
    ['no URL at all', DEFAULT_URL_POLICY, 'http://', /not a valid URL/],
    ['allowHosts: the host', policy({ allowHosts: ['example.com'] }), 'https://EXAMPLE.com./x', true],
    [
      'allowHosts: not a subdomain',
      policy({ allowHosts: ['example.com'] }),
      'https://www.example.com/',
      /not in allowHosts/,
    ],
    ['*.host: any depth', policy({ allowHosts: ['*.example.com'] }), 'https://a.b.example.com/', true],
    ['*.host: not the apex', policy({ allowHosts: ['*.example.com'] }), 'https://example.com/', /not in allowHosts/],
    ['*.host: a label boundary', policy({ allowHosts: ['*.example.com'] }), 'https://badexample.com/', /not in/],
    ['port in pattern', policy({ allowHosts: ['example.com:8443'] }), 'https://example.com:8443/', true],
    ['other port', policy({ allowHosts: ['example.com:8443'] }), 'https://example.com/', /not in allowHosts/],
    ['default port counts', policy({ allowHosts: ['example.com:443'] }), 'https://example.com/', true],
    ['no port: every port', policy({ denyHosts: ['intranet.test'] }), 'http://intranet.test:8080/', /is denied/],
    [
      'deny wins over allow',
      policy({ allowHosts: ['*.example.com'], denyHosts: ['admin.example.com'] }),
      'https://admin.example.com/',
      /host admin.example.com is denied \(denyHosts admin.example.com\)/,
    ],
    ['IPv6 pattern', policy({ denyHosts: ['[::1]:8080'] }), 'http://[0:0::1]:8080/', /denied/],
    ['IPv4 pattern in hex', policy({ denyHosts: ['0x7f.1'] }), 'http://127.0.0.1/', /denied/],
    ['loopback', PRIVATE, 'http://127.0.0.1:3000/', /127.0.0.1 is a loopback address/],
    ['all of 127/8', PRIVATE, 'http://127.8.9.10/', /loopback/],
    ['private 10/8', PRIVATE, 'http://10.1.2.3/', /private/],
    ['private 172.16/12', PRIVATE, 'http://172.31.255.255/', /private/],
    ['just outside 172.16/12', PRIVATE, 'http://172.32.0.1/', true],
    ['private 192.168/16', PRIVATE, 'http://192.168.1.1/', /private/],
    ['cloud metadata', PRIVATE, 'http://169.254.169.254/latest/meta-data/', /link-local \(cloud metadata\)/],
    ['carrier-grade NAT (Alibaba metadata)', PRIVATE, 'http://100.100.100.200/', /carrier-grade NAT/],
    ['0.0.0.0', PRIVATE, 'http://0.0.0.0:8000/', /"this" network/],
    ['decimal IPv4', PRIVATE, 'http://2130706433/', /127.0.0.1 is a loopback/],
    ['hex IPv4', PRIVATE, 'http://0x7f.1/', /127.0.0.1 is a loopback/],
    ['octal IPv4', PRIVATE, 'http://0177.0.0.1/', /127.0.0.1 is a loopback/],
    ['IPv6 loopback', PRIVATE, 'http://[::1]/', /loopback/],
    ['IPv6 unique local (AWS IPv6 metadata)', PRIVATE, 'http://[fd00:ec2::254]/', /unique local/],
    ['IPv6 link-local', PRIVATE, 'http://[fe80::1]/', /link-local/],
    ['IPv4-mapped IPv6', PRIVATE, 'http://[::ffff:127.0.0.1]/', /loopback/],
    ['IPv4-mapped metadata', PRIVATE, 'http://[::ffff:a9fe:a9fe]/', /cloud metadata/],
    ['localhost', PRIVATE, 'http://localhost:3000/', /localhost is a loopback name/],
    ['*.localhost', PRIVATE, 'http://app.localhost./', /loopback name/],
    ['a public address', PRIVATE, 'http://8.8.8.8/', true],
    ['a public IPv6 address', PRIVATE, 'http://[2606:4700:4700::1111]/', true],
    ['private addresses allowed by default', DEFAULT_URL_POLICY, 'http://169.254.169.254/', true],
  ])('%s: %s', (_name, p, url, expected) => {
    const verdict = checkUrl(p, url);
    if (expected === true) expect(verdict).toEqual({ ok: true });
    else expect(verdict).toMatchObject({ ok: false, reason: expect.stringMatching(expected) });
  });

  it.each<[string, UrlPolicy, string, LoadKind, boolean]>([
    ['allowHosts is for documents', policy({ allowHosts: ['example.com'] }), 'https://cdn.test/a.js', 'request', true],
    ['… a document elsewhere is not', policy({ allowHosts: ['example.com'] }), 'https://cdn.test/', 'document', false],
    [
      'denyHosts is for every request',
      policy({ denyHosts: ['tracker.test'] }),
      'https://tracker.test/p',
      'request',
      false,
    ],
    ['private addresses for every request', PRIVATE, 'http://10.0.0.1/x.png', 'request', false],
    ['file: for every request', DEFAULT_URL_POLICY, 'file:///etc/passwd', 'request', false],
    ['a page’s own data: images', policy({ schemes: ['https'] }), 'data:image/png;base64,AA', 'request', true],
    ['schemes are for documents', policy({ schemes: ['https'] }), 'http://img.test/a.png', 'request', true],
  ])('%s', (_name, p, url, kind, ok) => {
    expect(checkUrl(p, url, kind).ok).toBe(ok);
  });
});

describe('narrow: a task can only make the policy stricter', () => {
  const base = policy({ allowFile: true, allowHosts: ['*.example.com', 'other.test'], denyHosts: ['a.test'] });

  it.each<[string, UrlPolicy, unknown, Partial<UrlPolicy>]>([
    ['no task policy: the worker’s', base, undefined, base],
    ['schemes intersect', DEFAULT_URL_POLICY, { schemes: ['https'] }, { schemes: ['https'] }],
    [
      'a scheme the worker refuses stays refused',
      policy({ schemes: ['https'] }),
      { schemes: ['http'] },
      { schemes: [] },
    ],
    ['allowFile asked for, worker off: ignored', DEFAULT_URL_POLICY, { allowFile: true }, { allowFile: false }],
    ['allowFile turned off by the task', base, { allowFile: false }, { allowFile: false }],
    [
      'allowHosts from the task alone',
      DEFAULT_URL_POLICY,
      { allowHosts: ['shop.test'] },
      { allowHosts: ['shop.test'] },
    ],
    [
      'allowHosts intersected pattern by pattern',
      base,
      { allowHosts: ['shop.example.com', '*.b.example.com:8443', 'elsewhere.test'] },
      { allowHosts: ['shop.example.com', '*.b.example.com:8443'] },
    ],
    [
      'a wider task pattern is cut to the worker’s',
      policy({ allowHosts: ['a.example.com'] }),
      { allowHosts: ['*.example.com'] },
      { allowHosts: ['a.example.com'] },
    ],
    [
      'disjoint ports: nothing',
      policy({ allowHosts: ['a.test:80'] }),
      { allowHosts: ['a.test:81'] },
      { allowHosts: [] },
    ],
    ['denyHosts joined', base, { denyHosts: ['b.test', 'a.test'] }, { denyHosts: ['a.test', 'b.test'] }],
    [
      'denyPrivateAddresses: either',
      DEFAULT_URL_POLICY,
      { denyPrivateAddresses: true },
      { denyPrivateAddresses: true },
    ],
    ['denyPrivateAddresses cannot be lifted', PRIVATE, { denyPrivateAddresses: false }, { denyPrivateAddresses: true }],
  ])('%s', (_name, worker, task, expected) => {
    expect(narrow(worker, TaskUrlPolicySchema.optional().parse(task))).toMatchObject(expected);
  });

  it('never allows a URL the worker refuses (every pair of a grid)', () => {
    const workers = [DEFAULT_URL_POLICY, PRIVATE, base, policy({ schemes: ['https'], denyHosts: ['*.example.com'] })];
    const tasks = [
      {},
      { allowFile: true },
      { schemes: ['http' as const] },
      { allowHosts: ['*.example.com', '127.0.0.1', 'a.test'] },
      { denyPrivateAddresses: false, denyHosts: [] },
    ];
    const urls = [
      'file:///etc/hostname',
      'http://a.example.com/',
      'https://b.example.com:8443/',
      'http://127.0.0.1/',
      'https://a.test/',
      'about:blank',
      'data:text/html,x',
    ];
    for (const worker of workers) {
      for (const task of tasks) {
        const narrowed = narrow(worker, TaskUrlPolicySchema.parse(task));
        for (const url of urls) {
          if (checkUrl(narrowed, url).ok)
            expect(checkUrl(worker, url).ok, `${url} with ${JSON.stringify(task)}`).toBe(true);
        }
      }
    }
  });
});

describe('the policy schema', () => {
  it.each<[string, string]>([
    ['EXAMPLE.com', 'example.com'],
    ['*.Bücher.de', '*.xn--bcher-kva.de'],
    ['0x7f.1:8080', '127.0.0.1:8080'],
    ['[::FFFF:127.0.0.1]', '[::ffff:7f00:1]'],
    ['example.com.', 'example.com'],
  ])('normalises host pattern %j to %j', (pattern, normalised) => {
    expect(UrlPolicySchema.parse({ denyHosts: [pattern] }).denyHosts).toEqual([normalised]);
  });

  it.each(['http://x.com', 'a b', '*.', '*.[::1]', 'x.com:0', 'x.com:99999', '*x.com', 'x.com/path'])(
    'refuses host pattern %j',
    (pattern) => {
      expect(UrlPolicySchema.safeParse({ allowHosts: [pattern] }).success).toBe(false);
    },
  );

  it('refuses schemes other than http and https, and unknown fields', () => {
    expect(UrlPolicySchema.safeParse({ schemes: ['ftp'] }).success).toBe(false);
    expect(UrlPolicySchema.safeParse({ schemes: ['file'] }).success).toBe(false);
    expect(UrlPolicySchema.safeParse({ allowfile: true }).success).toBe(false);
  });

  it('has defaults that need no interception; any web rule does', () => {
    expect(policy()).toEqual(DEFAULT_URL_POLICY);
    expect(restrictsWeb(DEFAULT_URL_POLICY)).toBe(false);
    expect(restrictsWeb(policy({ allowFile: true }))).toBe(false);
    expect(restrictsWeb(policy({ schemes: ['https'] }))).toBe(true);
    expect(restrictsWeb(policy({ allowHosts: [] }))).toBe(true);
    expect(restrictsWeb(PRIVATE)).toBe(true);
  });
});

describe('task input', () => {
  const base = { runId: 'r1', instruction: 'x' };
  it.each<[string, Record<string, unknown>, true | RegExp]>([
    ['an http start URL', { startUrl: 'http://127.0.0.1:3000/' }, true],
    ['a file: start URL is left to the worker', { startUrl: 'file:///tmp/a.html' }, true],
    ['a javascript: start URL', { startUrl: 'javascript:alert(1)' }, /blocked by policy: the javascript: scheme/],
    ['a data: start URL', { startUrl: 'data:text/html,x' }, /data: scheme/],
    [
      'outside the task’s own allowHosts',
      { startUrl: 'https://evil.test/', urlPolicy: { allowHosts: ['ok.test'] } },
      /allowHosts/,
    ],
    ['file: the task itself turned off', { startUrl: 'file:///tmp/a', urlPolicy: { allowFile: false } }, /file:/],
    ['a bad host pattern', { urlPolicy: { denyHosts: ['http://x'] } }, /not a host pattern/],
  ])('%s', (_name, extra, expected) => {
    const parsed = TaskInputSchema.safeParse({ ...base, ...extra });
    if (expected === true) expect(parsed.success).toBe(true);
    else expect(parsed.error?.issues.map((i) => i.message).join('; ')).toMatch(expected);
  });

  it('keeps the task policy, normalised', () => {
    const input = TaskInputSchema.parse({ ...base, urlPolicy: { allowHosts: ['Shop.Test'], allowFile: true } });
    expect(input.urlPolicy).toEqual({ allowHosts: ['shop.test'], allowFile: true });
    expect(narrow(WIDEST_URL_POLICY, input.urlPolicy).allowHosts).toEqual(['shop.test']);
  });
});

describe('addresses', () => {
  it.each<[string, number[] | undefined]>([
    ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['[fe80::1%eth0]', [0xfe80, 0, 0, 0, 0, 0, 0, 1]],
    ['::ffff:1.2.3.4', [0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]],
    ['1:2:3:4:5:6:7:8', [1, 2, 3, 4, 5, 6, 7, 8]],
    ['1::2::3', undefined],
    ['1:2:3', undefined],
    ['12345::', undefined],
  ])('parseIPv6(%j)', (text, groups) => {
    expect(parseIPv6(text)).toEqual(groups);
  });

  it.each<[string, string | undefined]>([
    ['64:ff9b::7f00:1', 'loopback'], // NAT64 of 127.0.0.1
    ['2002:a9fe:a9fe::1', 'link-local (cloud metadata)'], // 6to4 of 169.254.169.254
    ['2002:808:808::1', undefined],
    ['::', 'unspecified'],
    ['ff02::1', 'multicast'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['93.184.216.34', undefined],
    ['not-an-ip', undefined],
  ])('nonPublicRange(%j) = %j', (text, range) => {
    expect(nonPublicRange(text)).toBe(range);
  });
});

describe('the private-address rule after DNS', () => {
  const answers: Record<string, string[]> = {
    'public.test': ['93.184.216.34'],
    'internal.test': ['10.0.0.5'],
    'mixed.test': ['93.184.216.34', '127.0.0.1'],
    'metadata.google.internal': ['169.254.169.254'],
  };
  const resolver = new HostResolver(async (host) => {
    const found = answers[host];
    if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: 4 }));
  });

  it.each<[string, true | RegExp]>([
    ['http://public.test/', true],
    ['http://internal.test/', /internal.test resolves to 10.0.0.5, a private address/],
    ['http://mixed.test/', /resolves to 127.0.0.1/],
    ['http://metadata.google.internal/computeMetadata/v1/', /cloud metadata/],
    ['http://nowhere.test/', /could not be resolved \(ENOTFOUND\)/],
    ['http://127.0.0.1/', /loopback/],
  ])('%s', async (url, expected) => {
    const verdict = await resolver.check(PRIVATE, url);
    if (expected === true) expect(verdict).toEqual({ ok: true });
    else expect(verdict).toMatchObject({ ok: false, reason: expect.stringMatching(expected) });
  });

  it('looks nothing up without the rule, and a name once while its answer is fresh', async () => {
    const seen: string[] = [];
    const counting = new HostResolver(async (host) => {
      seen.push(host);
      return [{ address: '93.184.216.34', family: 4 }];
    });
    expect(await counting.check(DEFAULT_URL_POLICY, 'http://internal.test/')).toEqual({ ok: true });
    await counting.check(PRIVATE, 'http://public.test/a');
    await counting.check(PRIVATE, 'http://public.test/b');
    expect(seen).toEqual(['public.test']);
  });
});

describe('visit_url addresses keep their scheme for the policy to judge', () => {
  it.each<[string, string]>([
    ['javascript:alert(1)', 'javascript:alert(1)'],
    ['data:text/html,<b>x</b>', 'data:text/html,<b>x</b>'],
    ['FILE:/etc/hostname', 'FILE:/etc/hostname'],
    ['view-source:https://a.test/', 'view-source:https://a.test/'],
    ['localhost:3000/x', 'https://localhost:3000/x'],
  ])('%j → %j', (input, expected) => {
    expect(resolveVisitUrl(input)).toBe(expected);
  });
});

describe('a browser over cdpUrl', () => {
  it('is told what it does not get of a policy with deny rules, and nothing for one without', () => {
    expect(remoteBrowserGaps(DEFAULT_URL_POLICY)).toBeNull();
    expect(remoteBrowserGaps(UrlPolicySchema.parse({ allowHosts: ['example.com'] }))).toBeNull();
    const both = remoteBrowserGaps(UrlPolicySchema.parse({ denyHosts: ['evil.test'], denyPrivateAddresses: true }));
    expect(both).toMatch(/^the browser is reached over cdpUrl, so the URL policy's denyHosts and denyPrivateAddresses/);
    expect(both).toContain('DNS rebinding');
    expect(remoteBrowserGaps(UrlPolicySchema.parse({ denyPrivateAddresses: true }))).toMatch(
      /policy's denyPrivateAddresses get no egress proxy/,
    );
  });

  it('a Browserbase session is told the same, named as such', () => {
    const gaps = remoteBrowserGaps(UrlPolicySchema.parse({ denyHosts: ['evil.test'] }), 'a Browserbase session');
    expect(gaps).toMatch(/^the browser is a Browserbase session, so the URL policy's denyHosts get no egress proxy/);
    expect(gaps).toMatch(/launch the browser on the worker \(browser\.provider 'chromium', no cdpUrl\)/);
  });
});
