/** Mistakes people make in config files: typos, an entry with neither or both of url/command, host keys. */
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  createSupervisor,
  fromMcpServersJson,
  parseServerConfig,
  type ConfigWarning,
} from '../../src/index.js';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

function warningsOf(entry: unknown): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  parseServerConfig('a', entry, { onWarning: (warning) => warnings.push(warning) });
  return warnings;
}

describe('validation', () => {
  it('an unknown field warns with a "did you mean"', () => {
    expect(warningsOf({ url: 'http://h/mcp', headrs: { a: 'b' } })).toEqual([
      { path: 'servers.a.headrs', message: 'unknown field (did you mean `headers`?)' },
    ]);
    expect(warningsOf({ command: 'node', arg: ['x.js'] })).toEqual([
      { path: 'servers.a.arg', message: 'unknown field (did you mean `args`?)' },
    ]);
    expect(warningsOf({ url: 'http://h/mcp', zzzzzzzz: 1 })[0]?.message).toBe('unknown field (ignored)');
  });

  it('strict mode turns the warnings into one ConfigError', () => {
    const error = configError(() =>
      parseServerConfig('a', { command: 'node', arg: ['x.js'], envv: {} }, { strict: true }),
    );
    expect(error.issues.map((i) => i.path)).toEqual(['servers.a.arg', 'servers.a.envv']);
    expect(error.message).toContain('did you mean `args`');
  });

  it('createSupervisor warns through onWarning, the logger, or strict', () => {
    const seen: string[] = [];
    createSupervisor({
      servers: { a: { url: 'http://h/mcp', headrs: {} } },
      onWarning: (w) => seen.push(w.path),
    });
    expect(seen).toEqual(['servers.a.headrs']);
    const logged: string[] = [];
    const logger = {
      warn: (_: object, message?: string) => void logged.push(String(message)),
      info: () => {},
      debug: () => {},
      error: () => {},
    };
    createSupervisor({ servers: { a: { url: 'http://h/mcp', headrs: {} } }, logger });
    expect(logged).toEqual(['servers.a.headrs: unknown field (did you mean `headers`?)']);
    expect(() => createSupervisor({ servers: { a: { url: 'http://h/mcp', headrs: {} } }, strict: true })).toThrow(
      ConfigError,
    );
  });

  it('neither url nor command says exactly that, and names a near miss', () => {
    expect(configError(() => parseServerConfig('x', {})).message).toBe(
      'invalid configuration: servers.x: has neither `url` (an HTTP server) nor `command` (a stdio server)',
    );
    expect(configError(() => parseServerConfig('x', { comand: 'node' })).message).toContain(
      '`comand` looks like a typo of `command`',
    );
    expect(configError(() => parseServerConfig('x', 'node')).message).toMatch(/servers\.x: must be an object/);
  });

  it('both url and command is an error that says so', () => {
    expect(configError(() => parseServerConfig('x', { url: 'http://h/mcp', command: 'node' })).message).toContain(
      'servers.x: has both `url` and `command`',
    );
  });

  it('host-specific keys that do not apply are ignored knowingly; unsupported ones say what to use', () => {
    expect(
      warningsOf({ command: 'node', autoApprove: ['x'], alwaysAllow: [], description: 'd', gallery: true, dev: {} }),
    ).toEqual([]);
    expect(warningsOf({ url: 'http://h/mcp', headersHelper: 'get-headers.sh', timeout: 5 })).toEqual([
      expect.objectContaining({ path: 'servers.a.headersHelper', message: expect.stringContaining('`headers`') }),
      expect.objectContaining({ path: 'servers.a.timeout', message: expect.stringContaining('requestTimeoutMs') }),
    ]);
  });

  it('a `${…}` given straight to createSupervisor warns that it is sent as written', () => {
    expect(warningsOf({ url: 'http://h/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } })).toEqual([
      expect.objectContaining({
        path: 'servers.a.headers.Authorization',
        message: expect.stringContaining('loadConfig'),
      }),
    ]);
  });

  it('a loaded file is warned about once, not again by the supervisor', () => {
    const seen: ConfigWarning[] = [];
    const servers = fromMcpServersJson(
      { mcpServers: { a: { url: 'http://h/mcp', headrs: {} } } },
      {
        onWarning: (w) => seen.push(w),
      },
    );
    createSupervisor({ servers, onWarning: (w) => seen.push(w) });
    expect(seen.map((w) => w.path)).toEqual(['servers.a.headrs']);
  });

  it('every bad server of a file is reported at once, and nothing is returned', () => {
    const error = configError(() =>
      fromMcpServersJson({
        mcpServers: { a: {}, b: { url: 'http://h/mcp', command: 'x' }, c: { url: 'http://h/mcp' } },
      }),
    );
    expect(error.issues.map((i) => i.path)).toEqual(['servers.a', 'servers.b']);
  });

  it('`disabled` is a boolean, false by default', () => {
    expect(parseServerConfig('a', { url: 'http://h/mcp' }).disabled).toBe(false);
    expect(parseServerConfig('a', { url: 'http://h/mcp', disabled: true }).disabled).toBe(true);
    expect(configError(() => parseServerConfig('a', { url: 'http://h/mcp', disabled: 'yes' })).message).toContain(
      'servers.a.disabled',
    );
  });
});
