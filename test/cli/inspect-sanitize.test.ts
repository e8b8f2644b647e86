/** The `inspect` option reaches every actor, and what it sees is sanitized. */
import { afterEach, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createSupervisor, type Supervisor } from '../../src/index.js';
import { createSanitizer } from '../../src/observe/inspection.js';
import { REDACTED, secretsOf } from '../../src/core/redact.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { nextTransition } from '../integration/helpers.js';

/** JSON of anything, cycles cut, functions dropped: what an inspector would send on. */
export function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'object' && item !== null) {
      if (seen.has(item)) return '[cycle]';
      seen.add(item);
    }
    return item;
  });
}

const idOf = (event: InspectionEvent): string => (event.actorRef as unknown as { id: string }).id;

let fixture: HttpFixture | undefined;
let sup: Supervisor | undefined;
afterEach(async () => {
  await sup?.stop();
  await fixture?.close();
  sup = undefined;
  fixture = undefined;
});

describe('inspection events', () => {
  it('reach the observer from every actor (listener and keepalive too), with no token and no session id', async () => {
    fixture = await startHttpFixture({ responseMode: 'sse' });
    const events: InspectionEvent[] = [];
    sup = createSupervisor({
      servers: {
        docs: {
          url: fixture.url,
          headers: { authorization: 'Bearer s3cret-token-value' },
          // A keepalive child of its own (proof 'server'): with 'origin' the origin's keepalive stands for it.
          keepalive: { intervalMs: 50, timeoutMs: 1_000, maxMissed: 3, proof: 'server' },
        },
      },
      inspect: (event) => events.push(event),
    });
    await sup.start();
    expect(sup.status().docs!.state).toBe('ready');
    await sup.server('docs').callTool('echo', { text: 'hello' });
    // A keepalive ping happened: the keepalive child was busy.
    await expect.poll(() => sup!.status().docs!.keepalive.lastRttMs, { timeout: 5_000 }).toBeDefined();
    const sessionIds = [...fixture.sessions];
    const expired = nextTransition(sup, (e) => e.to === 'ready' && e.from === 'reinitializing');
    fixture.expireAllSessions();
    await expired;

    sessionIds.push(...fixture.sessions);
    expect(sessionIds.length).toBe(2);
    const authorizations = fixture.requests.map((r) => r.headers.authorization);
    expect(authorizations).toContain('Bearer s3cret-token-value');

    const actorIds = new Set(events.map((e) => idOf(e)));
    expect(actorIds).toContain('docs');
    expect(actorIds).toContain('listener');
    expect(actorIds).toContain('keepalive');
    expect(events.some((e) => e.type === '@xstate.actor' && idOf(e) === 'keepalive')).toBe(true);
    expect(events.some((e) => e.type === '@xstate.snapshot' && idOf(e) === 'listener')).toBe(true);

    const text = safeJson(
      events.map((e) => ({ ...e, actorSnapshot: (e.actorRef as unknown as { getSnapshot(): unknown }).getSnapshot() })),
    );
    expect(text).not.toContain('s3cret');
    for (const id of sessionIds) expect(text).not.toContain(id);
  });

  it('redacts secret-looking keys and configured header values, in a copy', () => {
    const sanitizer = createSanitizer(
      secretsOf([{ headers: { Authorization: 'Bearer abc123', 'x-client': 'agent-7' } }]),
    );
    const original = {
      context: {
        sessionId: 'id-1',
        'mcp-session-id': 'id-2',
        apiKey: 'k',
        nested: [{ token: 't', note: 'sent Bearer abc123 to the server' }],
      },
      header: 'agent-7',
      mention: 'agent-7 is a substring here',
      keep: 'plain text',
      error: new Error('401 for abc123'),
    };
    const copy = sanitizer.value(original);
    expect(copy.context.sessionId).toBe(REDACTED);
    expect(copy.context['mcp-session-id']).toBe(REDACTED);
    expect(copy.context.apiKey).toBe(REDACTED);
    expect(copy.context.nested[0]!.token).toBe(REDACTED);
    expect(copy.context.nested[0]!.note).toBe(`sent ${REDACTED} to the server`);
    expect(copy.header).toBe(REDACTED);
    // Non-credential header values are hidden when they are the whole string, not inside text.
    expect(copy.mention).toBe('agent-7 is a substring here');
    expect(copy.keep).toBe('plain text');
    expect(copy.error.message).toBe(`401 for ${REDACTED}`);
    expect(original.context.sessionId).toBe('id-1');
    expect(original.error.message).toBe('401 for abc123');
  });

  it('survives cycles and keeps class instances (actor refs) as they are', () => {
    const sanitizer = createSanitizer(secretsOf([]));
    const ref = new (class Ref {
      id = 'r';
    })();
    const cyclic: Record<string, unknown> = { ref };
    cyclic.self = cyclic;
    const copy = sanitizer.value(cyclic);
    expect(copy.self).toBe(copy);
    expect(copy.ref).toBe(ref);
  });
});
