/** SEP-2243 `x-mcp-header`: which tool definitions are valid, and the `Mcp-Param-*` headers a call's arguments give. */
import { describe, expect, it } from 'vitest';
import { mirroredHeaders, scanToolHeaders } from '../../src/protocol/tool-headers.js';
import { ModernEnvelope } from '../../src/protocol/era.js';
import { ToolHeaders } from '../../src/runtime/requests/tool-headers.js';

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

describe('scanning tool definitions', () => {
  it('collects declarations at any depth of `properties`', () => {
    const scan = scanToolHeaders(
      schema({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        scope: { type: 'object', properties: { tenant: { type: 'integer', 'x-mcp-header': 'Tenant' } } },
        query: { type: 'string' },
      }),
    );
    expect(scan).toEqual({
      valid: true,
      declarations: [
        { path: ['region'], name: 'Region' },
        { path: ['scope', 'tenant'], name: 'Tenant' },
      ],
    });
  });

  it.each([
    ['empty', schema({ v: { type: 'string', 'x-mcp-header': '' } }), /empty/],
    ['not a string', schema({ v: { type: 'string', 'x-mcp-header': 7 } }), /not a string/],
    ['space', schema({ v: { type: 'string', 'x-mcp-header': 'My Region' } }), /token/],
    ['colon', schema({ v: { type: 'string', 'x-mcp-header': 'Region:Primary' } }), /token/],
    ['non-ASCII', schema({ v: { type: 'string', 'x-mcp-header': 'Région' } }), /token/],
    ['control character', schema({ v: { type: 'string', 'x-mcp-header': 'Region\t1' } }), /token/],
    ['CR LF', schema({ v: { type: 'string', 'x-mcp-header': 'A\r\nB' } }), /token/],
    ['object type', schema({ v: { type: 'object', 'x-mcp-header': 'V' } }), /type "object"/],
    ['array type', schema({ v: { type: 'array', 'x-mcp-header': 'V' } }), /type "array"/],
    ['null type', schema({ v: { type: 'null', 'x-mcp-header': 'V' } }), /type "null"/],
    ['number type', schema({ v: { type: 'number', 'x-mcp-header': 'V' } }), /type "number"/],
    ['no type', schema({ v: { 'x-mcp-header': 'V' } }), /type null/],
    [
      'duplicate, same case',
      schema({ a: { type: 'string', 'x-mcp-header': 'R' }, b: { type: 'string', 'x-mcp-header': 'R' } }),
      /repeats "R"/,
    ],
    [
      'duplicate, other case',
      schema({ a: { type: 'string', 'x-mcp-header': 'MyField' }, b: { type: 'string', 'x-mcp-header': 'myfield' } }),
      /repeats "MyField"/,
    ],
    ['on the root', { type: 'object', 'x-mcp-header': 'Root' }, /root/],
    ['under items', schema({ l: { type: 'array', items: { type: 'string', 'x-mcp-header': 'I' } } }), /reachable/],
    ['under anyOf', schema({}, { anyOf: [schema({ a: { type: 'string', 'x-mcp-header': 'A' } })] }), /reachable/],
    ['under if', schema({}, { if: schema({ a: { type: 'string', 'x-mcp-header': 'A' } }) }), /reachable/],
    ['under $defs', schema({}, { $defs: { d: { type: 'string', 'x-mcp-header': 'D' } } }), /reachable/],
    [
      'under additionalProperties',
      schema({}, { additionalProperties: { type: 'string', 'x-mcp-header': 'A' } }),
      /reachable/,
    ],
  ])('rejects %s', (_, inputSchema, reason) => {
    const scan = scanToolHeaders(inputSchema);
    expect(scan.valid).toBe(false);
    expect(!scan.valid && scan.reason).toMatch(reason);
  });

  it('a schema without annotations (or not an object) declares nothing', () => {
    expect(scanToolHeaders(schema({ a: { type: 'string' } }))).toEqual({ valid: true, declarations: [] });
    expect(scanToolHeaders(undefined)).toEqual({ valid: true, declarations: [] });
  });
});

describe('mirroring arguments', () => {
  const declarations = [
    { path: ['region'], name: 'Region' },
    { path: ['priority'], name: 'Priority' },
    { path: ['verbose'], name: 'Verbose' },
    { path: ['scope', 'tenant'], name: 'Tenant' },
  ];

  it('encodes strings (Base64 sentinel when unsafe), integers and booleans; omits null, absent and non-primitives', () => {
    expect(
      mirroredHeaders(declarations, { region: 'line1\nline2', priority: -7, verbose: true, scope: { tenant: 'acme' } }),
    ).toEqual({
      'mcp-param-region': '=?base64?bGluZTEKbGluZTI=?=',
      'mcp-param-priority': '-7',
      'mcp-param-verbose': 'true',
      'mcp-param-tenant': 'acme',
    });
    expect(mirroredHeaders(declarations, { region: null, priority: { n: 1 }, scope: 'flat' })).toBeUndefined();
    expect(mirroredHeaders(declarations, { priority: 2 ** 53 })).toBeUndefined();
    expect(mirroredHeaders(declarations, undefined)).toBeUndefined();
  });

  it('the registry mirrors only tools/call of listed tools and refuses invalid ones', () => {
    const registry = new ToolHeaders();
    registry.learn(
      {
        tools: [
          { name: 'good', inputSchema: schema({ r: { type: 'string', 'x-mcp-header': 'R' } }) },
          { name: 'bad', inputSchema: schema({ r: { type: 'number', 'x-mcp-header': 'R' } }) },
        ],
      },
      true,
    );
    expect(registry.headersFor('tools/call', { name: 'good', arguments: { r: 'x' } })).toEqual({ 'mcp-param-r': 'x' });
    expect(registry.headersFor('prompts/get', { name: 'good', arguments: { r: 'x' } })).toBeUndefined();
    expect(registry.refusal({ name: 'bad' }, 's')?.message).toMatch(/\[s\] tool 'bad' has an invalid definition/);
    expect(registry.refusal({ name: 'good' }, 's')).toBeUndefined();
    registry.learn({ tools: [{ name: 'bad', inputSchema: schema({}) }] }, true);
    expect(registry.refusal({ name: 'bad' }, 's')).toBeUndefined();
    expect(registry.headersFor('tools/call', { name: 'good', arguments: { r: 'x' } })).toBeUndefined();
  });
});

describe('the per-request log level', () => {
  it('rides in every later request’s _meta once set', () => {
    const envelope = new ModernEnvelope('2026-07-28', {}, { name: 'a', version: '1' });
    expect(envelope.wrap(undefined)._meta).not.toHaveProperty(['io.modelcontextprotocol/logLevel']);
    envelope.setLogLevel('warning');
    expect(envelope.wrap({ name: 'x' })._meta).toMatchObject({ 'io.modelcontextprotocol/logLevel': 'warning' });
    const restored = new ModernEnvelope('2026-07-28', {}, { name: 'a', version: '1' }, 'debug');
    expect(restored.wrap(undefined)._meta).toMatchObject({ 'io.modelcontextprotocol/logLevel': 'debug' });
  });
});
