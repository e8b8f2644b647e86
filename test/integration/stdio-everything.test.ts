/**
 * @modelcontextprotocol/server-everything over stdio: the reference server as a supervised child
 * process (its `bin` script run with this Node, argument `stdio`).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type ServerHandle } from '../../src/index.js';
import { isRunning } from '../transports/stdio/helpers.js';

const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve('@modelcontextprotocol/server-everything/package.json'));
const { bin } = require('@modelcontextprotocol/server-everything/package.json') as { bin: Record<string, string> };
const ENTRY = join(packageDir, bin['mcp-server-everything']!);

describe('server-everything over stdio', () => {
  let handle: ServerHandle;

  beforeAll(async () => {
    handle = await connect({ command: process.execPath, args: [ENTRY, 'stdio'] }, { name: 'everything' });
  });

  afterAll(async () => {
    await handle?.close();
  });

  it('initializes over stdio', () => {
    const status = handle.status();
    expect(status).toMatchObject({
      state: 'ready',
      transport: 'stdio',
      serverInfo: { name: 'mcp-servers/everything' },
    });
    expect(status.pid).toBeGreaterThan(0);
    expect(status.stderrTail!.join('\n')).toMatch(/STDIO/);
  });

  it('lists its tools and calls echo', async () => {
    const { tools } = await handle.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(await handle.callTool('echo', { message: 'over stdio' })).toMatchObject({
      content: [{ type: 'text', text: 'Echo: over stdio' }],
    });
    expect(await handle.callTool('get-sum', { a: 2, b: 3 })).toMatchObject({
      content: [{ type: 'text', text: expect.stringContaining('5') }],
    });
  });

  it('many concurrent calls on one pipe are each answered by id', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => handle.callTool('echo', { message: `m${i}` })),
    );
    results.forEach((result, i) => expect(result).toMatchObject({ content: [{ text: `Echo: m${i}` }] }));
  });

  it('close() stops the process', async () => {
    const pid = handle.status().pid!;
    await handle.close();
    expect(handle.status().state).toBe('closed');
    expect(isRunning(pid)).toBe(false);
  });
});
