/**
 * The callers' side of a runtime model run: requests issued through the real handle, what the
 * test expects of each (held until serving, replayed, failed with a given error), and the
 * checks after every step. The replay rules are written out here independently of
 * src/runtime/recovery/replay-policy.ts, so a broken rule there disagrees with this table.
 */
import { expect } from 'vitest';
import { OutcomeUnknownError, TransportError } from '../../../src/core/errors.js';
import type { ServerHandle } from '../../../src/handle/server-handle.js';
import type { Exchange, Script } from './scripted-transport.js';

/** The tools the scripted server lists, with the annotations the replay rules read. */
export const TOOLS = [
  { name: 'lookup', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'upsert', inputSchema: { type: 'object' }, annotations: { idempotentHint: true } },
  { name: 'charge', inputSchema: { type: 'object' } },
];

/**
 * Whether repeating it after an unknown outcome is safe (issue #15's rules): `always` and
 * `never` say so themselves; reading methods are; a tool is only once the runtime has seen the
 * tools list say it is read-only or idempotent.
 */
type Safety = 'safe' | 'unsafe' | 'safe once the tools are listed';

interface Kind {
  label: string;
  method: string;
  params: (tag: string) => Record<string, unknown>;
  retry?: 'always' | 'never';
  safety: Safety;
}

const call = (name: string) => (tag: string) => ({ name, arguments: { tag } });

/** One of each kind the replay rules tell apart. */
export const KINDS: Kind[] = [
  { label: 'read-only tool', method: 'tools/call', params: call('lookup'), safety: 'safe once the tools are listed' },
  { label: 'idempotent tool', method: 'tools/call', params: call('upsert'), safety: 'safe once the tools are listed' },
  { label: 'plain tool', method: 'tools/call', params: call('charge'), safety: 'unsafe' },
  {
    label: "plain tool, retry 'always'",
    method: 'tools/call',
    params: call('charge'),
    retry: 'always',
    safety: 'safe',
  },
  {
    label: "read-only tool, retry 'never'",
    method: 'tools/call',
    params: call('lookup'),
    retry: 'never',
    safety: 'unsafe',
  },
  { label: 'resources/read', method: 'resources/read', params: (tag) => ({ uri: `test://${tag}` }), safety: 'safe' },
  { label: 'prompts/get', method: 'prompts/get', params: (tag) => ({ name: 'p', arguments: { tag } }), safety: 'safe' },
];

type Expectation =
  /** Issued while not serving: must not be sent before the connection serves. */
  | 'held'
  /** Refused unprocessed, or lost and safe to repeat: must be sent again once serving. */
  | 'replay'
  /** Answered with a 400 that may be about the session: the probe decides. */
  | 'doubt'
  /** Refused with 401: sent again after authorizing, or fails with the authorization's error. */
  | 'authorization'
  | 'none';

export interface Tracked {
  tag: string;
  kind: Kind;
  expect: Expectation;
  /** Sends of it seen when the expectation was set. */
  sendsAtMark: number;
  outcome: { ok: unknown } | { error: unknown } | undefined;
  /** The error it may settle with at this step (checked, then cleared). */
  mayFailWith: (new (...args: never[]) => Error) | undefined;
}

export function tagOf(exchange: Exchange): string | undefined {
  const params = exchange.message.params as { arguments?: { tag?: unknown }; uri?: unknown } | undefined;
  const tag =
    params?.arguments?.tag ?? (typeof params?.uri === 'string' ? params.uri.slice('test://'.length) : undefined);
  return typeof tag === 'string' ? tag : undefined;
}

export class RequestBook {
  readonly tracked: Tracked[] = [];
  /** The runtime has seen the tools list (and its annotations). */
  toolsListed = false;
  private next = 0;

  constructor(
    private readonly script: Script,
    private readonly handle: ServerHandle,
  ) {}

  sends(request: Tracked): number {
    return this.script.sent.filter((e) => tagOf(e) === request.tag).length;
  }

  /** The request's newest exchange, if it is on the wire now. */
  inFlight(request: Tracked): Exchange | undefined {
    const last = this.script.sent.filter((e) => tagOf(e) === request.tag).at(-1);
    return request.outcome === undefined && last && !last.reply.settled ? last : undefined;
  }

  issue(kind: Kind, expectation: Expectation): Tracked {
    const tag = `t${++this.next}`;
    const request: Tracked = {
      tag,
      kind,
      expect: expectation,
      sendsAtMark: 0,
      outcome: undefined,
      mayFailWith: undefined,
    };
    this.tracked.push(request);
    const options = kind.retry === undefined ? undefined : { retry: kind.retry };
    this.handle.request(kind.method, kind.params(tag), options).then(
      (ok) => (request.outcome = { ok }),
      (error: unknown) => (request.outcome = { error }),
    );
    return request;
  }

  /** One of each kind, on the wire (the connection serves). */
  issueBatch(): void {
    for (const kind of KINDS) this.issue(kind, 'none');
  }

  /** A caller while the connection does not serve. */
  issueHeld(): void {
    this.issue(KINDS[this.next % KINDS.length]!, 'held');
  }

  /** The oldest request on the wire of the current session, the carrier of the next evidence. */
  carrier(generation: number): { request: Tracked; exchange: Exchange } {
    for (const request of this.tracked) {
      const exchange = this.inFlight(request);
      if (exchange && exchange.transport === this.script.current && exchange.generation === generation)
        return { request, exchange };
    }
    throw new Error(`no request on the wire of session ${generation} to carry the evidence`);
  }

  mark(request: Tracked, expectation: Expectation, mayFailWith?: Tracked['mayFailWith']): void {
    request.expect = expectation;
    request.sendsAtMark = this.sends(request);
    request.mayFailWith = mayFailWith;
  }

  /** The transport died: what was on the wire has an unknown outcome; only the safe kinds come back. */
  markLost(): void {
    for (const request of this.tracked) {
      if (!this.inFlight(request)) continue;
      if (this.isSafe(request)) this.mark(request, 'replay');
      else this.mark(request, 'none', OutcomeUnknownError);
    }
  }

  isSafe(request: Tracked): boolean {
    const { safety } = request.kind;
    return safety === 'safe' || (safety === 'safe once the tools are listed' && this.toolsListed);
  }

  /** Requests waiting in the gate (held, parked, in doubt) may now fail with `error`. */
  allowWaitingToFail(error: Tracked['mayFailWith'], only?: Expectation): void {
    for (const request of this.tracked) {
      if (request.outcome !== undefined || request.expect === 'none') continue;
      if (only === undefined || request.expect === only) request.mayFailWith = error;
    }
  }

  allowAllToFail(error: Tracked['mayFailWith']): void {
    for (const request of this.tracked) if (request.outcome === undefined) request.mayFailWith = error;
  }

  /** The probe found the session alive: the doubtful 400s were about the requests themselves. */
  settleDoubt(alive: boolean): void {
    for (const request of this.tracked) {
      if (request.expect !== 'doubt') continue;
      if (alive) this.mark(request, 'none', TransportError);
      else request.expect = 'replay';
    }
  }

  /** After a step: each request against its expectation. */
  check(where: string, serving: boolean, settledBefore: Set<Tracked>): void {
    for (const request of this.tracked) {
      const name = `${where}: ${request.tag} (${request.kind.label}, expected ${request.expect})`;
      if (request.outcome !== undefined && !settledBefore.has(request)) {
        expect('ok' in request.outcome, `${name} never gets an answer from the script`).toBe(false);
        const error = (request.outcome as { error: unknown }).error;
        expect(request.mayFailWith, `${name} failed when it should not have: ${String(error)}`).toBeDefined();
        expect(error, `${name} fails with the error its rule names`).toBeInstanceOf(request.mayFailWith!);
      }
      if (request.outcome !== undefined) continue;
      expect(request.mayFailWith, `${name} should have failed with ${request.mayFailWith?.name}`).toBeUndefined();
      const waits = request.expect !== 'none';
      if (waits && !serving)
        expect(this.sends(request), `${name} is not sent while the connection does not serve`).toBe(
          request.sendsAtMark,
        );
      if (serving && (request.expect === 'replay' || request.expect === 'held' || request.expect === 'authorization')) {
        expect(this.sends(request), `${name} is sent (again) once serving`).toBeGreaterThan(request.sendsAtMark);
        request.expect = 'none';
      }
      if (!this.isSafe(request))
        expect(
          this.sends(request),
          `${name}: a request that is not safe to repeat is never repeated`,
        ).toBeLessThanOrEqual(1 + this.refusals(request));
    }
  }

  /** Sends of it that were refused unprocessed (404, 400 naming the session, 401, unreachable): they may be repeated. */
  private refusals(request: Tracked): number {
    return this.script.sent.filter((e) => tagOf(e) === request.tag && e.refusedUnprocessed).length;
  }

  settled(): Set<Tracked> {
    return new Set(this.tracked.filter((r) => r.outcome !== undefined));
  }

  /** Allowed failures apply to one step only. */
  clearAllowances(): void {
    for (const request of this.tracked) if (request.outcome === undefined) request.mayFailWith = undefined;
  }
}
