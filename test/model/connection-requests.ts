/**
 * The requests around a pure connection machine: the machine's request actions (`hold requests`,
 * `release requests`, `reject waiting requests`, `fail parked requests`, `settle doubtful
 * requests`, ...) are provided by a ledger that keeps requests as the
 * runtime's gate does, and the model drives callers and evidence into it. After every step the
 * ledger is checked against what the state promises: nothing waits while serving, everything
 * waiting is rejected when the server is gone for good, refused and lost requests are sent again
 * (parked before held), doubtful ones follow the probe's verdict.
 */
import { expect } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import type { ConnectionContext, SessionInfo } from '../../machines/connection.machine.js';
import { reviveDelay } from '../../machines/restart-policy.js';
import type { Harness } from './harness.js';
import type { StepContext } from './runner.js';

type Phase = 'holding' | 'open' | 'closed';

/** What became of one request, in order: `sent`, `held`, `parked`, `doubtful`, `failed: …`, `rejected: …`. */
type History = string[];

export class RequestLedger {
  phase: Phase = 'holding';
  held: string[] = [];
  parked: string[] = [];
  doubtful: string[] = [];
  readonly history = new Map<string, History>();
  /** The machine's action calls during the current step, by name. */
  calls: Array<{ action: string; params?: unknown; at: number }> = [];
  /** What the last release sent, in order. */
  lastRelease: string[] = [];
  private next = 0;

  private note(id: string, what: string): void {
    const history = this.history.get(id) ?? [];
    history.push(what);
    this.history.set(id, history);
  }

  /** A caller issues a request: sent while open, held while holding, rejected when closed. */
  issue(): string {
    const id = `r${++this.next}`;
    if (this.phase === 'open') this.note(id, 'sent');
    else if (this.phase === 'closed') this.note(id, 'rejected: closed');
    else {
      this.note(id, 'held');
      this.held.push(id);
    }
    return id;
  }

  /** A request that was on the wire comes back as evidence: parked for replay, or in doubt. */
  sentAndReturned(where: 'parked' | 'doubtful'): string {
    const id = `r${++this.next}`;
    this.note(id, 'sent');
    this.note(id, where);
    (where === 'parked' ? this.parked : this.doubtful).push(id);
    return id;
  }

  hold(): void {
    this.phase = 'holding';
  }

  release(): void {
    this.phase = 'open';
    this.lastRelease = [...this.parked, ...this.held];
    for (const id of this.lastRelease) this.note(id, 'sent');
    this.parked = [];
    this.held = [];
  }

  reject(reason: string): void {
    this.phase = 'closed';
    for (const id of [...this.parked, ...this.doubtful, ...this.held]) this.note(id, `rejected: ${reason}`);
    this.parked = [];
    this.doubtful = [];
    this.held = [];
  }

  failParked(): void {
    for (const id of this.parked) this.note(id, 'failed: authorization');
    this.parked = [];
  }

  settleDoubtful(lost: boolean): void {
    for (const id of this.doubtful) {
      if (lost) {
        this.note(id, 'parked');
        this.parked.push(id);
      } else this.note(id, 'failed: its own 400');
    }
    this.doubtful = [];
  }

  get waiting(): string[] {
    return [...this.parked, ...this.doubtful, ...this.held];
  }
}

export function ledgerOf(h: Harness): RequestLedger {
  h.scratch ??= {};
  return (h.scratch.ledger ??= new RequestLedger()) as RequestLedger;
}

/** The machine's request actions, bound to one run's ledger. */
export function requestActions(h: Harness) {
  const record = (action: string, params?: unknown) =>
    ledgerOf(h).calls.push({ action, params, at: h.clock?.now() ?? 0 });
  return {
    'hold requests': () => {
      record('hold requests');
      ledgerOf(h).hold();
    },
    'release requests': () => {
      record('release requests');
      ledgerOf(h).release();
    },
    'reject waiting requests': (_: unknown, params: { reason: string }) => {
      record('reject waiting requests', params);
      ledgerOf(h).reject(params.reason);
    },
    'fail parked requests': () => {
      record('fail parked requests');
      ledgerOf(h).failParked();
    },
    'settle doubtful requests': (_: unknown, params: { lost: boolean }) => {
      record('settle doubtful requests', params);
      ledgerOf(h).settleDoubtful(params.lost);
    },
    'settle attempt': () => record('settle attempt'),
    'replace transport': () => record('replace transport'),
    'join origin keepalive': () => record('join origin keepalive'),
    'leave origin keepalive': () => record('leave origin keepalive'),
  };
}

function generationOf(snapshot: AnyMachineSnapshot): number | undefined {
  return (snapshot.context.session as SessionInfo | undefined)?.sessionGeneration;
}

/**
 * Before a step: a caller issues a request (as callers do at any time), and the evidence event
 * brings the request that carried it, where the runtime puts it (server-runtime.ts).
 */
export function driveRequests(event: AnyEventObject, h: Harness, before: AnyMachineSnapshot): void {
  const ledger = ledgerOf(h);
  ledger.calls = [];
  h.facts.length = 0;
  if (before.status !== 'active') return;
  ledger.issue();
  // Only requests on the wire bring evidence back: while ready (serving), or just before a probe.
  if (!before.matches('ready') && !before.matches('probing')) return;
  const current = event.generation === undefined || event.generation === generationOf(before);
  switch (event.type) {
    // 404 or a 400 naming the session; 401; a connection that could not be made; a break mid-answer
    // of a request safe to repeat: the request was not processed (or may be repeated), it waits.
    case 'SESSION_EXPIRED':
    case 'AUTHORIZATION_REQUIRED':
    case 'SERVER_UNREACHABLE':
    case 'CONNECTION_LOST':
      if (current) ledger.sentAndReturned('parked');
      break;
    case 'SESSION_IN_DOUBT':
      if (current) ledger.sentAndReturned('doubtful');
      break;
  }
}

function calls(ledger: RequestLedger, action: string): unknown[] {
  return ledger.calls.filter((c) => c.action === action).map((c) => c.params);
}

function entered(before: AnyMachineSnapshot, after: AnyMachineSnapshot, state: string | object): boolean {
  return after.matches(state) && !before.matches(state);
}

/** After a step: the ledger against what the state promises. */
export function checkRequests({ h, event, before, after }: StepContext): void {
  const ledger = ledgerOf(h);
  const gone = after.status === 'done' || after.matches('closing') || after.matches({ failed: 'for good' });
  const serving = after.matches({ ready: 'serving' });
  expect(ledger.phase, 'the gate: open exactly while serving, closed once the server is gone').toBe(
    gone ? 'closed' : serving ? 'open' : 'holding',
  );
  if (serving) expect(ledger.waiting, 'nothing waits while serving').toEqual([]);
  if (!after.matches('probing')) expect(ledger.doubtful, 'requests are in doubt only while probing').toEqual([]);

  // Released: the refused and lost ones first (they were issued earlier), then the held ones, once each.
  const released = calls(ledger, 'release requests').length;
  expect(released, 'requests are released exactly on entering serving').toBe(
    entered(before, after, { ready: 'serving' }) ? 1 : 0,
  );
  if (released) {
    const parkedFirst = ledger.lastRelease.map((id) => ledger.history.get(id)!.includes('parked'));
    expect(parkedFirst, 'parked requests are sent again before held ones').toEqual([...parkedFirst].sort().reverse());
  }

  // Gone for good: every waiting request is rejected, with the reason, once.
  const rejections = calls(ledger, 'reject waiting requests') as Array<{ reason: string }>;
  const lastError = (after.context as ConnectionContext).lastError;
  const expectedRejections = entered(before, after, 'closing')
    ? [{ reason: 'the connection was closed' }]
    : entered(before, after, { failed: 'for good' })
      ? [{ reason: `the server has failed: ${lastError ?? 'unknown error'}` }]
      : [];
  expect(rejections, 'waiting requests are rejected exactly when the server is gone for good').toEqual(
    expectedRejections,
  );

  // The probe's verdict: alive → the 400s were about the requests; anything else → replayed later.
  const settled = calls(ledger, 'settle doubtful requests');
  // (CLOSE rejects them with the others.)
  if (before.matches('probing') && !after.matches('probing') && !after.matches('closing')) {
    const alive = event.type === 'xstate.done.actor.probe' && (event.output as { verdict: string }).verdict === 'alive';
    expect(settled, 'leaving probing settles the doubtful requests by the verdict').toEqual([{ lost: !alive }]);
  } else expect(settled).toEqual([]);

  const failedAuthorization = event.type === 'xstate.error.actor.authorize';
  expect(calls(ledger, 'fail parked requests'), 'parked requests fail only with their authorization').toHaveLength(
    failedAuthorization ? 1 : 0,
  );

  checkRevival({ h, event, before, after });
  expect(calls(ledger, 'replace transport'), 'a reconnect request opens a new transport').toHaveLength(
    event.type === 'RECONNECT' && before.status === 'active' && !before.matches('closing') ? 1 : 0,
  );
  const settleAttempt = calls(ledger, 'settle attempt').length;
  const attemptOver =
    entered(before, after, { ready: 'serving' }) ||
    entered(before, after, 'reconnecting') ||
    // Down with the restart budget spent (a connection that decides its restarts): given up at once.
    (entered(before, after, 'failed') && !before.matches('reconnecting')) ||
    (after.status === 'done' && before.status === 'active');
  expect(settleAttempt, 'an attempt settles when serving, down, or closed').toBe(attemptOver ? 1 : 0);

  // Every request ends at most once, and nothing is sent after it ended.
  for (const [id, history] of ledger.history) {
    const end = history.findIndex((what) => what.startsWith('failed') || what.startsWith('rejected'));
    if (end >= 0) expect(history.length - 1, `${id} ends once and stays ended: ${history.join(' → ')}`).toBe(end);
  }
}

/** `failed`: a revival is scheduled with the capped backoff, and taken after exactly that delay. */
function checkRevival({ h, event, before, after }: Omit<StepContext, 'reportsFrom'>): void {
  const context = after.context as ConnectionContext;
  const scheduled = h.facts.filter((f) => f.type === 'revival scheduled').map(({ delayMs }) => ({ delayMs }));
  if (entered(before, after, { failed: 'waiting to revive' })) {
    const settings = context.revive;
    if (settings === false) throw new Error('revival scheduled with revive: false');
    expect(context.fatal, 'a fatal failure is never revived').toBe(false);
    const delayMs = reviveDelay(context.restarts.revivals, settings);
    expect(delayMs, 'the revival delay is capped').toBeLessThanOrEqual(settings.maxMs);
    expect(scheduled, 'one revival scheduled, with the capped backoff').toEqual([{ delayMs }]);
    h.scratch.revivalDueAt = h.clock.now() + delayMs;
  } else if (entered(before, after, { failed: 'hurrying to revive' })) {
    // Requests wait: the revival comes within waitingReconnectMs, and status() is told so.
    expect(scheduled, 'the revival is brought forward').toEqual([{ delayMs: context.waitingReconnectMs }]);
    h.scratch.revivalDueAt = h.clock.now() + context.waitingReconnectMs;
  } else expect(scheduled).toEqual([]);
  if (entered(before, after, { failed: 'for good' }))
    expect(context.fatal || context.revive === false, 'failed for good only when fatal or revival is off').toBe(true);
  if (entered(before, after, { failed: 'reviving' }))
    expect(h.clock.now(), 'revived exactly when scheduled').toBe(h.scratch.revivalDueAt);
  if (before.matches('failed') && after.matches('connecting') && event.type !== 'RECONNECT')
    expect(context.restarts.revivals, 'each revival counts').toBe(
      (before.context as ConnectionContext).restarts.revivals + 1,
    );
  if (event.type === 'RECONNECT' && after.matches('connecting')) expect(context.restarts.revivals).toBe(0);
  if (event.type === 'REQUESTS_WAITING' && before.matches({ failed: 'waiting to revive' }))
    expect(after.matches({ failed: 'hurrying to revive' }), 'only the first revival is brought forward').toBe(
      (before.context as ConnectionContext).restarts.revivals === 0,
    );
}
