/**
 * The catalog and the 2026-07-28 wire: SEP-2549 caching hints (`ttlMs`) decide when a cached
 * tools list is fetched again, and tools with invalid SEP-2243 definitions are named in
 * `rejected` instead of offered. Against the official v2 server (its `cacheHints`) and the
 * hand-written modern fixture. Time moves with a faked `Date` only.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSupervisor, type Supervisor } from '../../src/index.js';
import { startModernFixture, type ModernFixture } from '../../servers/modern-fixture.js';
import { startV2Server, type V2Server } from '../integration/modern/v2-server.js';

let supervisor: Supervisor | undefined;
let fixture: ModernFixture | undefined;
let v2: V2Server | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await supervisor?.stop().catch(() => {});
  await fixture?.close();
  await v2?.close();
  supervisor = fixture = v2 = undefined;
});

async function supervise(url: string): Promise<Supervisor> {
  supervisor = createSupervisor({ servers: { s: { url, keepalive: false, requestTimeoutMs: 5_000 } } });
  await supervisor.start();
  return supervisor;
}

const ECHO = { name: 'echo', inputSchema: { type: 'object' } };

describe('caching hints (SEP-2549) in the tool catalog', () => {
  it('a list is reused while its ttlMs lasts and fetched again on the next tools() after (v2 server, ttlMs 60 s)', async () => {
    v2 = await startV2Server('modern');
    const sup = await supervise(v2.url);
    const lists = () => v2!.seen.filter((s) => (s.body as { method?: string })?.method === 'tools/list').length;
    vi.useFakeTimers({ toFake: ['Date'] });
    const first = await sup.tools();
    expect(first.tools.map((t) => t.originalName)).toEqual(['echo', 'regional']);
    expect(lists()).toBe(1);
    vi.setSystemTime(Date.now() + 59_000);
    expect(await sup.tools()).toBe(first);
    expect(lists()).toBe(1);
    vi.setSystemTime(Date.now() + 2_000);
    const second = await sup.tools();
    expect(lists()).toBe(2);
    expect(second.version).toBe(first.version); // same tools: no change
  });

  it('ttlMs 0 is stale at once: every tools() lists again; no ttlMs keeps the list until invalidated', async () => {
    fixture = await startModernFixture([ECHO]);
    fixture.ttlMs = 0;
    fixture.cacheScope = 'private';
    const sup = await supervise(fixture.url);
    await sup.tools();
    await sup.tools();
    expect(fixture.posts('tools/list')).toHaveLength(2);
    fixture.ttlMs = undefined;
    fixture.cacheScope = undefined;
    await sup.tools(); // stale since the last one: fetched, now without a hint
    await sup.tools();
    await sup.tools();
    expect(fixture.posts('tools/list')).toHaveLength(3);
  });

  it('a negative ttlMs counts as 0', async () => {
    fixture = await startModernFixture([ECHO]);
    fixture.ttlMs = -5;
    const sup = await supervise(fixture.url);
    await sup.tools();
    await sup.tools();
    expect(fixture.posts('tools/list')).toHaveLength(2);
  });
});

describe('invalid tool definitions in the catalog', () => {
  it('are not offered; `rejected` names server, tool and reason; valid tools are callable', async () => {
    fixture = await startModernFixture([
      ECHO,
      { name: 'bad', inputSchema: { type: 'object', properties: { v: { type: 'number', 'x-mcp-header': 'V' } } } },
    ]);
    const sup = await supervise(fixture.url);
    const snapshot = await sup.tools();
    expect(snapshot.tools.map((t) => t.originalName)).toEqual(['echo']);
    expect(snapshot.rejected).toEqual([
      { server: 's', tool: 'bad', reason: expect.stringMatching(/type "number": only string, integer and boolean/) },
    ]);
    await expect(sup.catalog.call('s__echo', {})).resolves.toBeDefined();
  });
});

describe('JSON Schema 2020-12 passes through', () => {
  it('inputSchema and outputSchema reach the catalog verbatim ($schema, $defs, $anchor, composition, conditionals)', async () => {
    const inputSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { city: { type: 'string' } } } },
      properties: { address: { $ref: '#/$defs/address' }, phone: { type: 'string' }, email: { type: 'string' } },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { required: ['phone'] },
      then: { properties: { phone: { minLength: 3 } } },
      else: { required: ['email'] },
      additionalProperties: { type: 'string' },
    };
    const outputSchema = { oneOf: [{ type: 'object' }, { type: 'array' }] }; // no `type: object` at the root
    fixture = await startModernFixture([{ name: 'rich', inputSchema, outputSchema }]);
    const sup = await supervise(fixture.url);
    const [tool] = (await sup.tools()).tools;
    expect(tool!.inputSchema).toEqual(inputSchema);
    expect(tool!.definition.outputSchema).toEqual(outputSchema);
  });
});
