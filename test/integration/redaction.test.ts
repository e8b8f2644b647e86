/**
 * One redaction rule (src/core/redact.ts) for everything that leaves the runtime: the same
 * secret-bearing headers, URL and server-echoed bodies go through errors, transition events,
 * logs, status and inspection, and no secret comes out of any of them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createSupervisor, type Supervisor } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { nextTransition, recordTransitions } from './helpers.js';

const TOKEN = 'tok-AAAA1111-bearer';
const HEADERS = {
  Authorization: `Bearer ${TOKEN}`,
  'x-secret': 'hunter2-BBBB2222',
  'x-api-key': 'key-CCCC3333',
  'x-tenant': 'acme-tenant',
};
const QUERY_KEY = 'qk-DDDD4444';

let fixture: HttpFixture | undefined;
let sup: Supervisor | undefined;
afterEach(async () => {
  await sup?.stop();
  await fixture?.close();
  sup = undefined;
  fixture = undefined;
});

/** Every secret the test configured or the server handed out, with and without its scheme. */
/** JSON of anything, cycles cut, functions dropped: what an inspector or a log shipper would send on. */
function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'object' && item !== null) {
      if (seen.has(item)) return '[cycle]';
      seen.add(item);
    }
    return item;
  });
}

function secrets(f: HttpFixture): string[] {
  const sessions = new Set(f.requests.map((r) => r.headers['mcp-session-id']).filter((id) => typeof id === 'string'));
  return [HEADERS.Authorization, TOKEN, HEADERS['x-secret'], HEADERS['x-api-key'], QUERY_KEY, ...sessions];
}

function expectNoSecret(where: string, text: string, known: string[]): void {
  for (const secret of known) expect(text, `${where} leaks ${secret.slice(0, 6)}…`).not.toContain(secret);
}

describe('one redaction rule', () => {
  it('no secret reaches errors, transitions, logs, status or inspection, even when the server echoes them', async () => {
    fixture = await startHttpFixture();
    const logged: unknown[] = [];
    const log = (fields: Record<string, unknown>, message?: string) => logged.push({ fields, message });
    const inspected: InspectionEvent[] = [];
    sup = createSupervisor({
      servers: { docs: { url: `${fixture.url}?api_key=${QUERY_KEY}`, headers: HEADERS, keepalive: false } },
      logger: { debug: log, info: log, warn: log, error: log },
      inspect: (event) => inspected.push(event),
    });
    const transitions = recordTransitions(sup);
    await sup.start();
    const docs = sup.server('docs');
    expect(fixture.requests.at(-1)!.headers['x-secret']).toBe(HEADERS['x-secret']);
    expect(fixture.requests.at(-1)!.path).toContain(QUERY_KEY);

    // A request answered with an error body that repeats every header and the URL.
    fixture.faults.echoRequestOnce = true;
    const error = await docs.callTool('echo', { text: 'x' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('[redacted]');
    const errorText = `${(error as Error).message} ${safeJson(error)}`;

    // A failed re-initialize whose error echoes them too: it reaches a transition, the log and status.
    const down = nextTransition(sup, (e) => e.to === 'reconnecting');
    fixture.faults.echoRequestOnce = 'initialize';
    fixture.expireAllSessions();
    const healed = docs.callTool('echo', { text: 'y' });
    const downEvent = await down;
    expect(downEvent.error).toContain('[redacted]');
    const lastError = sup.status().docs!.lastError;
    // The parked call is answered once the restarted connection is ready.
    expect((await healed).content).toEqual([{ type: 'text', text: 'y' }]);

    const known = secrets(fixture);
    expect(known.length).toBeGreaterThanOrEqual(7); // two sessions at least
    expectNoSecret('the error', errorText, known);
    expectNoSecret('the transitions', JSON.stringify(transitions), known);
    expectNoSecret('the log', JSON.stringify(logged), known);
    expectNoSecret('status().lastError', String(lastError), known);
    expectNoSecret('status()', JSON.stringify(sup.status()), known);
    expectNoSecret('inspection', inspected.map(safeJson).join('\n'), known);
    // What is not secret stays readable: the error still names the failure.
    expect(errorText).toContain('HTTP 500');
  });
});
