/** The modern wire's pure parts: the `_meta` envelope, SEP-2243 header values, version pins. */
import { describe, expect, it } from 'vitest';
import { ModernEnvelope, mutualModernVersion, pinOf } from '../../src/protocol/era.js';
import { encodeHeaderValue } from '../../src/protocol/tool-headers.js';
import { modernRequestHeaders } from '../../src/transports/http/modern-headers.js';

describe('the _meta envelope', () => {
  const envelope = new ModernEnvelope('2026-07-28', { roots: {} }, { name: 'agent', version: '1.0.0' });

  it('adds version, capabilities and client info, keeping the caller’s own _meta keys and params', () => {
    expect(envelope.wrap({ name: 'echo', _meta: { progressToken: 7 } })).toEqual({
      name: 'echo',
      _meta: {
        progressToken: 7,
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { roots: {} },
        'io.modelcontextprotocol/clientInfo': { name: 'agent', version: '1.0.0' },
      },
    });
  });

  it('gives a request without params an envelope of its own', () => {
    expect(Object.keys(envelope.wrap(undefined)._meta as object)).toHaveLength(3);
  });
});

describe('SEP-2243 header values', () => {
  it.each([
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
  ])('%j is sent as %s (the spec’s examples)', (value, header) => {
    expect(encodeHeaderValue(value)).toBe(header);
  });

  it('Mcp-Method on every request, Mcp-Name for tools/call, prompts/get and resources/read', () => {
    const base = { accept: 'application/json, text/event-stream' };
    expect(modernRequestHeaders(base, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).toEqual({
      ...base,
      'mcp-method': 'tools/list',
    });
    expect(
      modernRequestHeaders(base, { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'file:///a b' } }),
    ).toMatchObject({ 'mcp-method': 'resources/read', 'mcp-name': 'file:///a b' });
    expect(
      modernRequestHeaders(base, { jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'résumé' } }),
    ).toMatchObject({ 'mcp-name': `=?base64?${Buffer.from('résumé').toString('base64')}?=` });
  });

  it.each(['tasks/get', 'tasks/update', 'tasks/cancel'])(
    '%s carries its taskId in Mcp-Name (SEP-2663 routing)',
    (method) => {
      const message = { jsonrpc: '2.0' as const, id: 4, method, params: { taskId: 'task-7' } };
      expect(modernRequestHeaders({}, message)).toEqual({ 'mcp-method': method, 'mcp-name': 'task-7' });
    },
  );
});

describe('modern request headers, reused', () => {
  const call = (name: string) => ({ jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name } });

  it('one object per method and name while the shared headers stay the same', () => {
    const base = { authorization: 'Bearer one' };
    const first = modernRequestHeaders(base, call('echo'));
    expect(modernRequestHeaders(base, { ...call('echo'), id: 2 })).toBe(first);
    expect(modernRequestHeaders(base, call('other'))).toMatchObject({ 'mcp-name': 'other' });
    expect(modernRequestHeaders(base, { jsonrpc: '2.0', id: 3, method: 'tools/list' })).not.toHaveProperty('mcp-name');
  });

  it('new shared headers (a new token, session or version) are never answered from the old ones', () => {
    const before = modernRequestHeaders({ authorization: 'Bearer old' }, call('echo'));
    const after = modernRequestHeaders({ authorization: 'Bearer new' }, call('echo'));
    expect(before.authorization).toBe('Bearer old');
    expect(after.authorization).toBe('Bearer new');
  });

  it('mirrored parameters are per call, never kept', () => {
    const base = {};
    const withParam = modernRequestHeaders(base, call('regional'), { 'mcp-param-region': 'eu' });
    expect(withParam).toMatchObject({ 'mcp-name': 'regional', 'mcp-param-region': 'eu' });
    expect(modernRequestHeaders(base, call('regional'))).not.toHaveProperty('mcp-param-region');
  });
});

describe('protocolVersion pins', () => {
  it('reads an era or a version', () => {
    expect(pinOf('auto')).toEqual({ era: 'auto' });
    expect(pinOf('2026-07-28')).toEqual({ era: 'modern', version: '2026-07-28' });
    expect(pinOf('2025-06-18')).toEqual({ era: 'legacy', version: '2025-06-18' });
  });

  it('a pinned version is never negotiated away', () => {
    expect(mutualModernVersion(['2026-07-28'], undefined)).toBe('2026-07-28');
    expect(mutualModernVersion(['2027-01-01'], '2026-07-28')).toBeUndefined();
    expect(mutualModernVersion('not a list')).toBeUndefined();
  });
});

describe('the protocolVersion option', () => {
  it('defaults to auto; a value it does not know is a ConfigError naming the field', async () => {
    const { parseServerConfig } = await import('../../src/config/server-config.js');
    const { ConfigError } = await import('../../src/core/errors.js');
    expect(parseServerConfig('a', { url: 'http://127.0.0.1/mcp' }).protocolVersion).toBe('auto');
    expect(() => parseServerConfig('a', { url: 'http://127.0.0.1/mcp', protocolVersion: '2024-01-01' })).toThrow(
      ConfigError,
    );
    expect(() => parseServerConfig('a', { url: 'http://127.0.0.1/mcp', protocolVersion: 'newest' })).toThrow(
      /servers\.a\.protocolVersion: must be one of auto, legacy, modern, 2026-07-28/,
    );
  });
});
