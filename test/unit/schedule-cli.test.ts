// `cua schedule create` refuses what it can check before connecting, one line each, exit 2: a bad cron, an unknown
// time zone, a URL the URL policy refuses, a bad interval, an unreadable condition, a run flag that is not for a
// schedule. No server is needed (none is reachable at the address given).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../cli/cli';

describe('cua schedule create: bad input, one line each', () => {
  let errors: string[];
  beforeEach(() => {
    errors = [];
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void errors.push(String(line)));
    vi.stubEnv('TEMPORAL_ADDRESS', '127.0.0.1:1');
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  const task = ['--', 'Read the price', '--url', 'https://shop.example/item'];
  it.each([
    ['a bad cron', ['--cron', '0 9 * *'], task, /^cua: invalid schedule: cron: '0 9 \* \*' has 4 field\(s\)/],
    ['a cron field out of range', ['--cron', '0 9 * * 1-9'], task, /cron day of week: 9 is outside 0–7/],
    [
      'an unknown time zone',
      ['--cron', '0 9 * * 1-5', '--timezone', 'Europe/Atlantis'],
      task,
      /^cua: invalid schedule: --timezone: unknown time zone 'Europe\/Atlantis'/,
    ],
    [
      'a file: URL the URL policy refuses',
      ['--every', '1h'],
      ['--', 'Read it', '--url', 'file:///etc/passwd'],
      /^cua: invalid schedule: startUrl: blocked by the URL policy: file: URLs are not allowed/,
    ],
    [
      'a javascript: URL',
      ['--every', '1h'],
      ['--', 'Read it', '--url', 'javascript:alert(1)'],
      /^cua: invalid schedule: startUrl: /,
    ],
    ['a bad interval', ['--every', 'often'], task, /^cua: invalid schedule: --every 'often' is no duration/],
    ['both timings', ['--every', '1h', '--cron', '0 9 * * *'], task, /give exactly one of --cron and --every/],
    [
      'an unreadable condition',
      ['--every', '1h', '--notify-when', 'output.price <'],
      task,
      /^cua: invalid schedule: notifyWhen: a value is missing at the end/,
    ],
    ['--id among the run flags', ['--every', '1h'], [...task, '--id', 'x'], /--id is not for a schedule/],
    ['a bad name', ['--every', '1h'], task, /invalid schedule: name: letters, digits/],
  ])('%s', async (_what, flags, after, message) => {
    const name = _what === 'a bad name' ? 'bad:name' : 'prices';
    const code = await main(['schedule', 'create', name, ...flags, ...after]);
    expect(code).toBe(2);
    expect(errors.join('\n')).toMatch(message);
    expect(errors.join('\n').split('\n')[0]).toMatch(/^cua: /);
  });
});
