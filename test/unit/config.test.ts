/** Config validation: clear errors that name the server and the field; the mcpServers format. */
import { describe, expect, it } from 'vitest';
import { ConfigError, createSupervisor, fromMcpServersJson, parseServerConfig } from '../../src/index.js';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('server config', () => {
  it('fills defaults for a URL server', () => {
    const config = parseServerConfig('docs', { url: 'http://127.0.0.1:3000/mcp' });
    expect(config).toMatchObject({
      kind: 'url',
      name: 'docs',
      type: 'auto',
      requestTimeoutMs: 60_000,
      maxMessageBytes: 16 * 1024 * 1024,
      headers: {},
      keepalive: { intervalMs: 30_000, timeoutMs: 10_000, maxMissed: 3 },
      restart: {
        maxRestarts: 20,
        withinMs: 600_000,
        backoff: { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2 },
      },
    });
  });

  it('names the server and the field in errors', () => {
    const error = configError(() => parseServerConfig('docs', { url: 'http://x/mcp', requestTimeoutMs: -5 }));
    expect(error.message).toContain('servers.docs.requestTimeoutMs');
    expect(error.issues[0]?.path).toBe('servers.docs.requestTimeoutMs');
  });

  it('rejects a non-http URL with a message naming the field', () => {
    const error = configError(() => parseServerConfig('files', { url: 'ftp://example.com/' }));
    expect(error.message).toMatch(/servers\.files\.url: must be an http:\/\/ or https:\/\/ URL/);
  });

  it('rejects a config with neither url nor command', () => {
    const error = configError(() => parseServerConfig('x', { headers: {} }));
    expect(error.message).toMatch(/servers\.x/);
  });

  it('rejects unknown restart fields and bad backoff values', () => {
    const error = configError(() =>
      parseServerConfig('x', { url: 'http://h/mcp', restart: { maxRestarts: 1, backoff: { jitter: 3 } } }),
    );
    expect(error.message).toContain('servers.x.restart.backoff.jitter');
  });

  it('infers legacy SSE from a URL path ending in /sse (slash and query allowed)', () => {
    expect(parseServerConfig('a', { url: 'http://h/sse' }).type).toBe('sse');
    expect(parseServerConfig('a', { url: 'http://h/sse/' }).type).toBe('sse');
    expect(parseServerConfig('a', { url: 'http://h/v1/sse?key=1' }).type).toBe('sse');
    expect(parseServerConfig('a', { url: 'http://h/sse-tools/mcp' }).type).toBe('auto');
    expect(parseServerConfig('a', { url: 'http://h/sse', type: 'http' }).type).toBe('http');
  });

  it('accepts the transport aliases used by other clients', () => {
    expect(parseServerConfig('a', { url: 'http://h/mcp', type: 'streamable-http' }).type).toBe('http');
    expect(parseServerConfig('a', { url: 'http://h/mcp', type: 'streamableHttp' }).type).toBe('http');
    expect(configError(() => parseServerConfig('a', { url: 'http://h/mcp', type: 'websocket' })).message).toMatch(
      /servers\.a\.type: must be one of/,
    );
  });

  it("keepalive proof: 'origin' by default, 'server' on request, anything else a ConfigError naming the field", () => {
    expect(parseServerConfig('a', { url: 'http://h/mcp' }).keepalive).toMatchObject({ proof: 'origin' });
    expect(parseServerConfig('a', { url: 'http://h/mcp', keepalive: { proof: 'server' } }).keepalive).toMatchObject({
      proof: 'server',
      intervalMs: 30_000,
    });
    const error = configError(() =>
      parseServerConfig('a', { url: 'http://h/mcp', keepalive: { proof: 'session' as 'server' } }),
    );
    expect(error.message).toContain('servers.a.keepalive.proof');
  });

  it('keepalive can be disabled with false', () => {
    expect(parseServerConfig('a', { url: 'http://h/mcp', keepalive: false }).keepalive).toBe(false);
  });

  it('accepts legacy HTTP+SSE servers (a /sse URL or type sse)', () => {
    expect(() =>
      createSupervisor({ servers: { old: { url: 'http://h/sse' }, other: { url: 'http://h/events', type: 'sse' } } }),
    ).not.toThrow();
  });

  it('accepts stdio servers (`command`) without starting them', () => {
    expect(() => createSupervisor({ servers: { files: { command: 'node', args: ['x.js'] } } })).not.toThrow();
  });

  it('refuses an empty servers map', () => {
    expect(() => createSupervisor({ servers: {} })).toThrow(ConfigError);
  });
});

describe('mcpServers JSON files', () => {
  it('loads the Claude Desktop / Cursor shape as-is', () => {
    const servers = fromMcpServersJson({
      mcpServers: {
        files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'], env: { A: '1' } },
        docs: { url: 'https://example.com/mcp', headers: { authorization: 'Bearer x' } },
        old: { type: 'sse', url: 'https://legacy.example.com/events' },
      },
    });
    expect(Object.keys(servers)).toEqual(['files', 'docs', 'old']);
    expect(parseServerConfig('old', servers.old).type).toBe('sse');
  });

  it("loads VS Code's `servers` key", () => {
    expect(Object.keys(fromMcpServersJson({ servers: { a: { type: 'http', url: 'http://h/mcp' } } }))).toEqual(['a']);
  });

  it('names the server and field of a bad entry', () => {
    const error = configError(() => fromMcpServersJson({ mcpServers: { bad: { command: '' } } }));
    expect(error.message).toContain('servers.bad.command');
  });

  it('says what is missing when there is no servers map', () => {
    expect(configError(() => fromMcpServersJson({ nope: 1 })).message).toMatch(/mcpServers/);
  });
});
