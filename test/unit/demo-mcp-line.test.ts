// The line `cua demo` prints to add this project's MCP server to a client: the demo's Temporal address (when not the
// default), its run folders and config, each word quoted so a shell reads it back unchanged.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mcpAddLine } from '../../cli/commands/demo';

/** The words a POSIX shell makes of `line`. */
const words = (line: string) =>
  execFileSync('bash', ['-c', `printf '%s\\n' ${line}`], { encoding: 'utf8' })
    .trimEnd()
    .split('\n');

describe('mcpAddLine', () => {
  it('names the demo’s server, run folders and config; the bin it runs exists', () => {
    const line = mcpAddLine('127.0.0.1:17233', "/tmp/it's a dir/runs", 'demo.json');
    const w = words(line);
    expect(w.slice(0, 4)).toEqual(['claude', 'mcp', 'add', 'durable-cua']);
    expect(w).toContain('TEMPORAL_ADDRESS=127.0.0.1:17233');
    expect(w).toContain("CUA_RUNS_DIR=/tmp/it's a dir/runs");
    expect(w).toContain(`CUA_CONFIG=${process.cwd()}/demo.json`);
    const command = w.slice(w.indexOf('--') + 1);
    expect(command[0]).toBe('node');
    expect(fs.existsSync(command[1]!)).toBe(true);
    expect(command[2]).toBe('mcp');
  });

  it('leaves the default address and an absent config out', () => {
    const line = mcpAddLine('127.0.0.1:7233', '/data/runs', undefined);
    expect(line).toMatch(/^claude mcp add durable-cua -e CUA_RUNS_DIR=\/data\/runs -- node \S+\/bin\/cua\.js mcp$/);
  });
});
