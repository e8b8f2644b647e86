/**
 * outputSchema checking and JSON Schema dialects (spec 2026-07-28, SEP-2106): 2020-12 by default,
 * its vocabulary understood, other declared dialects checked or refused by name, and a network
 * `$ref` never fetched (a real HTTP server counts what it is asked for).
 */
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolOutputSchemas } from '../../src/protocol/tool-output.js';
import { ToolOutputError } from '../../src/protocol/result-errors.js';
import { listenOnLoopback, type Listening } from '../../servers/listen.js';

let canary: Listening | undefined;
afterEach(async () => {
  await canary?.close();
  canary = undefined;
});

function schemasOf(outputSchema: Record<string, unknown>): ToolOutputSchemas {
  const schemas = new ToolOutputSchemas();
  schemas.learn({ tools: [{ name: 't', inputSchema: { type: 'object' }, outputSchema }] }, true);
  return schemas;
}

const check = (schemas: ToolOutputSchemas, structuredContent: unknown) => () =>
  schemas.check('t', { structuredContent }, 's');

const RICH_2020 = {
  type: 'object',
  $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { city: { type: 'string' } } } },
  properties: {
    address: { $ref: '#addressDef' },
    home: { $ref: '#/$defs/address' },
    pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false },
    contactMethod: { enum: ['phone', 'email'] },
  },
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: true,
  unevaluatedProperties: false,
  allOf: [{ anyOf: [{ required: ['address'] }, { required: ['home'] }] }],
};

describe('JSON Schema 2020-12 (the default dialect)', () => {
  it('understands $anchor, $defs refs, prefixItems, if/then/else, unevaluatedProperties and composition', () => {
    const schemas = schemasOf(RICH_2020);
    expect(check(schemas, { address: { city: 'Oslo' }, pair: ['a', 1] })).not.toThrow();
    expect(check(schemas, { address: { city: 7 } })).toThrow(/structuredContent\.address\.city/);
    expect(check(schemas, { home: {}, pair: ['a', 1, 2] })).toThrow(ToolOutputError); // items: false after prefixItems
    expect(check(schemas, { home: {}, contactMethod: 'phone' })).toThrow(/phone/); // then: phone required
    expect(check(schemas, { home: {}, extra: 1 })).toThrow(ToolOutputError); // unevaluatedProperties
    expect(check(schemas, { pair: ['a', 1] })).toThrow(ToolOutputError); // anyOf: address or home
  });

  it('accepts an explicit 2020-12 $schema, a non-object root, and checks draft-07 and 2019-09 by their own rules', () => {
    const explicit = schemasOf({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' });
    expect(check(explicit, {})).not.toThrow();
    // draft-07: `items` as an array is the tuple form.
    const draft7 = schemasOf({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { pair: { items: [{ type: 'string' }, { type: 'integer' }] } },
    });
    expect(check(draft7, { pair: ['a', 1] })).not.toThrow();
    expect(check(draft7, { pair: ['a', 'b'] })).toThrow(/structuredContent\.pair\[1\]/);
    const draft2019 = schemasOf({
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      type: 'object',
      unevaluatedProperties: false,
    });
    expect(check(draft2019, { a: 1 })).toThrow(ToolOutputError);
  });

  it('an unsupported dialect is a ToolOutputError naming it', () => {
    const schemas = schemasOf({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' });
    expect(check(schemas, {})).toThrow(/dialect "http:\/\/json-schema.org\/draft-04\/schema#" is not supported/);
  });
});

describe('a network $ref', () => {
  it('is never fetched: that part accepts anything, the rest is still checked', async () => {
    let fetched = 0;
    canary = await listenOnLoopback(
      createServer((_req, res) => {
        fetched++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"string"}');
      }),
    );
    const schemas = schemasOf({
      type: 'object',
      properties: { profile: { $ref: `${canary.origin}/profile-schema.json` }, id: { type: 'string' } },
      required: ['id'],
    });
    expect(check(schemas, { id: 'u1', profile: { anything: true } })).not.toThrow();
    expect(check(schemas, { profile: 1 })).toThrow(/structuredContent\.id/);
    // Nothing asynchronous is pending: a fetch would have had to start by now.
    await new Promise((resolve) => setImmediate(resolve));
    expect(fetched).toBe(0);
  });
});
