/**
 * The era paths of the runtime model (issue 18): what the scripted server does while the
 * connection is `discovering` or speaks the 2026-07-28 wire, and what must be on the wire then,
 * written from the spec (basic/versioning, server/discover) rather than from src/runtime:
 *
 * - every request on a modern transport carries the `_meta` envelope of that transport's version
 *   (protocol version, client capabilities, client info); no request on the 2025 wire does;
 * - a connection under `auto` that is not latched legacy asks `server/discover` first, with our
 *   newest modern version, and nothing else goes out before it is answered;
 * - a server that does not answer as a modern one gets `initialize` next, on the same Streamable
 *   HTTP transport (no legacy SSE probe);
 * - a request refused with -32022 is re-issued as a new request (a new id) once the connection
 *   serves again, in the era and version the new discovery chose.
 */
import { expect } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import { TransportError } from '../../../src/core/errors.js';
import { discovery, unauthorized as refusedOnOpen } from '../connection.spec.js';
import { socketError, unauthorized } from './scripted-answers.js';
import type { Exchange, Script } from './scripted-transport.js';
import { tagOf } from './requests.js';

export const OUR_MODERN_VERSION = '2026-07-28';
const META = {
  version: 'io.modelcontextprotocol/protocolVersion',
  capabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
} as const;

const done = (id: string, output?: unknown): AnyEventObject => ({ type: `xstate.done.actor.${id}`, output });
const failure = (id: string, error: unknown): AnyEventObject => ({ type: `xstate.error.actor.${id}`, error });

/** A DiscoverResult naming `versions` (2026-07-28 results say they are complete). */
export function discoverResult(versions: string[]): unknown {
  return {
    resultType: 'complete',
    supportedVersions: versions,
    capabilities: { tools: {} },
    _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'scripted', version: '2.0.0' } },
  };
}

/** Ready (or probing) with a modern server's discovery for a session. */
export function isModernSession(snapshot: AnyMachineSnapshot): boolean {
  return (snapshot.context.session as { era?: string } | undefined)?.era === 'modern';
}

/**
 * States the runtime leaves by itself in the modern era, and the event it takes: no GET stream to
 * open (the listener settles at once), no session to DELETE on close.
 */
export function passesByItself(snapshot: AnyMachineSnapshot): AnyEventObject | undefined {
  // The origin's turn: run.ts opens the origin before each restart or revival, so the turn is now.
  if (snapshot.matches({ reconnecting: 'waiting for origin' }) || snapshot.matches({ failed: 'reviving' }))
    return done('origin');
  if (snapshot.matches({ ready: 'opening listener' }) && isModernSession(snapshot)) return { type: 'LISTENER_SETTLED' };
  if (snapshot.matches('closing') && isModernSession(snapshot)) return done('close');
  return undefined;
}

/** What the discover probe can end in. (No CLOSE here: a modern transport closes without a DELETE to wait for.) */
export function discoverEvents(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  const generation = snapshot.context.latchedEra ? 2 : 1;
  return [
    done('discover', { era: 'modern', session: discovery(generation) }),
    done('discover', { era: 'legacy', evidence: "HTTP 400 for 'server/discover'" }),
    failure('discover', new Error('ECONNREFUSED')),
    failure('discover', refusedOnOpen()),
    { type: 'CONNECTION_LOST', error: 'exited with code 1' },
  ];
}

/**
 * The discover probe's answer. Modern: a DiscoverResult with our version. Legacy: on a first
 * discovery a 2025-era server's 400 (no JSON-RPC body); on a rediscovery (the server changed its
 * versions) a DiscoverResult that lists only a 2025 version.
 */
export function answerDiscover(script: Script, event: AnyEventObject, before: AnyMachineSnapshot): void {
  const probe = script.waitingFor('server/discover');
  if (!probe) throw new Error('no server/discover is waiting');
  const modern = (event.output as { era: string }).era === 'modern';
  if (modern) return script.answer(probe, discoverResult([OUR_MODERN_VERSION]));
  if (before.context.latchedEra === 'modern') return script.answer(probe, discoverResult(['2025-11-25']));
  script.fail(probe, new TransportError("HTTP 400 for 'server/discover'", 400, { body: 'Bad Request' }));
}

/** The probe failed: refused with 401, or the server unreachable. */
export function failDiscover(script: Script, event: AnyEventObject, authGeneration: number): void {
  const probe = script.waitingFor('server/discover')!;
  if ((event.error as { code?: string }).code === 'AUTHORIZATION_REQUIRED')
    return script.fail(probe, unauthorized(authGeneration));
  script.fail(probe, socketError('ECONNREFUSED'));
}

/** A modern request refused because the server no longer speaks our version (an upgrade behind the same URL). */
export function refuseVersion(script: Script, exchange: Exchange): void {
  exchange.refusedUnprocessed = true; // -32022: the server did not process it
  script.error(exchange, {
    code: -32022,
    message: 'Unsupported protocol version',
    data: { supported: ['2025-11-25'], requested: exchange.modernVersion },
  });
}

/** A request refused with -32022, to be re-issued. */
export interface Reissue {
  tag: string;
  id: unknown;
  sent: number;
}

/** The wire rules above, after a step (`before`/`after`: the model's states around it). */
export class WireCheck {
  private readonly reissues: Reissue[] = [];
  private checked = 0;

  constructor(private readonly script: Script) {}

  refused(exchange: Exchange): void {
    this.reissues.push({ tag: tagOf(exchange)!, id: exchange.message.id, sent: this.script.sent.length });
  }

  check(where: string, event: AnyEventObject, before: AnyMachineSnapshot, after: AnyMachineSnapshot): void {
    const { sent } = this.script;
    for (const exchange of sent.slice(this.checked)) expectEnvelope(where, exchange);
    this.checked = sent.length;
    const entered = !before.matches('discovering') && after.matches('discovering');
    if (entered) {
      const probe = this.script.waitingFor('server/discover');
      expect(probe, `${where}: entering discovering sends server/discover`).toBeDefined();
      expect(probe!.modernVersion, `${where}: the probe offers our newest modern version`).toBe(OUR_MODERN_VERSION);
      expect(probe!.transport, `${where}: on the current transport`).toBe(this.script.current);
      const onTransport = sent.filter((e) => e.transport === probe!.transport);
      expect(onTransport.at(-1), `${where}: nothing goes out on this transport after the probe`).toBe(probe);
    }
    if (event.type === 'xstate.done.actor.discover' && after.matches('initializing')) {
      const initialize = this.script.waitingFor('initialize');
      expect(initialize, `${where}: a legacy verdict is followed by initialize`).toBeDefined();
      expect(initialize!.transport, `${where}: on the same transport`).toBe(this.script.current);
      expect(initialize!.transport.kind, `${where}: Streamable HTTP, no legacy SSE probe`).toBe('http');
      expect(initialize!.modernVersion, `${where}: initialize goes out on the 2025 wire`).toBeUndefined();
    }
    if (after.matches({ ready: 'serving' })) this.checkReissues(where);
  }

  /** Each refused request went out again as a new request, on the era the new discovery chose. */
  checkReissues(where: string): void {
    for (const reissue of this.reissues.splice(0)) {
      const again = this.script.sent.slice(reissue.sent).filter((e) => tagOf(e) === reissue.tag);
      expect(again.length, `${where}: ${reissue.tag}, refused with -32022, is re-issued once serving`).toBeGreaterThan(
        0,
      );
      const next = again[0]!;
      expect(next.message.id, `${where}: ${reissue.tag} is re-issued as a new request (new id)`).not.toEqual(
        reissue.id,
      );
      expect(next.transport.modernVersion, `${where}: ${reissue.tag} goes out in the era now spoken`).toBe(
        next.modernVersion,
      );
      if (next.modernVersion === undefined) {
        const handshake = this.script.sent.find(
          (e) => e.transport === next.transport && e.message.method === 'initialize',
        );
        expect(handshake?.reply.settled, `${where}: the 2025-era re-issue follows an answered initialize`).toBe(true);
      }
    }
  }

  /** Requests refused but not yet re-issued (the connection has not served since). */
  get outstanding(): number {
    return this.reissues.length;
  }
}

/** The envelope of the wire the request went out on, and nothing of it on the 2025 wire. */
function expectEnvelope(where: string, exchange: Exchange): void {
  const meta = (exchange.message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const name = `${where}: ${exchange.message.method} #${String(exchange.message.id)}`;
  if (exchange.modernVersion === undefined) {
    expect(meta?.[META.version], `${name} on the 2025 wire carries no modern envelope`).toBeUndefined();
    return;
  }
  expect(meta?.[META.version], `${name} names its protocol version in _meta`).toBe(exchange.modernVersion);
  expect(meta?.[META.capabilities], `${name} carries the client capabilities`).toEqual(expect.any(Object));
  expect(meta?.[META.clientInfo], `${name} carries the client info`).toEqual(
    expect.objectContaining({ name: expect.any(String), version: expect.any(String) }),
  );
}
