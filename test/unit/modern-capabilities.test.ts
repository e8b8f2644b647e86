/**
 * The client capabilities in the modern `_meta` envelope: 2026-07-28 removed
 * `notifications/roots/list_changed` (its `roots` capability is `{}`), so `roots.listChanged` is
 * not declared there; the legacy `initialize` keeps it (test/integration/server-requests.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { withoutRootsListChanged } from '../../src/runtime/session/client-capabilities.js';
import { capabilitiesFor } from '../../src/runtime/server-input/server-requests.js';
import { ModernEnvelope } from '../../src/protocol/era.js';

describe('modern client capabilities', () => {
  it('roots without listChanged; the other capabilities and roots settings kept', () => {
    const legacy = capabilitiesFor({ roots: () => ({ roots: [] }), elicitation: () => ({ action: 'decline' }) });
    expect(legacy.roots).toEqual({ listChanged: true });
    const roots = { listChanged: true, 'x-note': 1 } as { listChanged: boolean };
    const modern = withoutRootsListChanged({ ...legacy, roots });
    expect(modern.roots).toEqual({ 'x-note': 1 });
    expect(modern.elicitation).toEqual(legacy.elicitation);
    const meta = new ModernEnvelope('2026-07-28', withoutRootsListChanged(legacy), { name: 'a', version: '1' }).wrap(
      undefined,
    )._meta as Record<string, { roots?: unknown }>;
    expect(meta['io.modelcontextprotocol/clientCapabilities']?.roots).toEqual({});
  });

  it('capabilities without roots are returned as they are', () => {
    const capabilities = { sampling: {} };
    expect(withoutRootsListChanged(capabilities)).toBe(capabilities);
  });
});
