import { describe, expect, it } from 'vitest';
import { CallToolResultSchema, isPlainToolResult } from '../../src/protocol/results.js';

// The hot path's hand check (isPlainToolResult) must never accept what the schema refuses.
const cases: unknown[] = [
  { content: [{ type: 'text', text: 'ok' }] },
  {
    content: [
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b', annotations: { priority: 1 } },
    ],
  },
  { content: [] },
  {},
  { isError: true, content: [{ type: 'text', text: 'boom' }] },
  { isError: 'yes', content: [] },
  { content: [{ type: 'text' }] },
  { content: [{ type: 'text', text: 3 }] },
  { content: [{ type: 'image', data: 'x', mimeType: 'image/png' }] },
  { content: [null] },
  { content: [[{ type: 'text', text: 'x' }]] },
  { content: 'text' },
  { content: [{ type: 'text', text: 'ok' }], structuredContent: { a: 1 } },
  { content: [{ type: 'text', text: 'ok' }], _meta: 'not an object' },
  { content: [{ type: 'text', text: 'ok' }], _meta: { 'io.modelcontextprotocol/serverInfo': { name: 's' } } },
  { content: [{ type: 'text', text: 'ok' }], _meta: [] },
  { content: [{ type: 'text', text: 'ok' }], _meta: null },
  { content: [{ type: 'text', text: 'ok' }], _meta: {}, resultType: 'complete' },
  { content: [{ type: 'text', text: 'ok' }], extra: 1 },
  [],
  null,
  'ok',
];

describe('isPlainToolResult', () => {
  it.each(cases.map((c) => [JSON.stringify(c), c]))('accepts only what CallToolResultSchema accepts: %s', (_, c) => {
    if (isPlainToolResult(c)) expect(CallToolResultSchema.safeParse(c).success).toBe(true);
  });

  it('takes the common text result', () => {
    expect(isPlainToolResult({ content: [{ type: 'text', text: 'ok' }] })).toBe(true);
    expect(isPlainToolResult({ content: [{ type: 'text', text: 'ok' }], isError: false })).toBe(true);
    // 2026-07-28: the server's identity in `_meta`, the result's kind beside it.
    expect(
      isPlainToolResult({ content: [], resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': {} } }),
    ).toBe(true);
  });

  it('leaves every other shape to the schema', () => {
    expect(isPlainToolResult({ content: [{ type: 'text', text: 'ok' }], structuredContent: {} })).toBe(false);
    expect(isPlainToolResult({ content: [{ type: 'image', data: 'x', mimeType: 'image/png' }] })).toBe(false);
    expect(isPlainToolResult({ content: [{ type: 'text', text: 1 }] })).toBe(false);
    expect(isPlainToolResult([])).toBe(false);
    expect(isPlainToolResult({ content: [], _meta: [] })).toBe(false);
  });
});
