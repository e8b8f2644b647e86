import { describe, expect, it } from 'vitest';
import { supervisorMachine, type SupervisorContext } from '../../machines/supervisor.machine.js';
import { flush, snapshotOf, type Harness } from './harness.js';
import { startModel } from './runner.js';
import { membershipSpec } from './supervisor-membership.spec.js';
import { modelSuite } from './suite.js';
import {
  down,
  finishConnection,
  NAMES,
  policyOf,
  received,
  stubConnection,
  supervisorSpec,
} from './supervisor.spec.js';

const spec = supervisorSpec(supervisorMachine);

modelSuite('supervisor', spec, {
  variants: [{ label: 'servers come and go', spec: membershipSpec(supervisorMachine) }],
});

function restartTimes(h: Harness, server: string): number[] {
  return received(h, 'RESTART', server).map((r) => r.at);
}

/** Sends CONNECTION_DOWN and checks the RESTART arrives after exactly `backoff` ms, not 1 ms sooner. */
async function expectRestartAfter(h: Harness, server: string, backoff: number): Promise<void> {
  const start = h.clock.now();
  const before = restartTimes(h, server).length;
  const giveUps = received(h, 'GIVE_UP', server).length;
  h.actor.send(down(server, false));
  h.clock.advance(backoff - 1);
  expect(restartTimes(h, server), `no RESTART ${backoff - 1} ms after the failure`).toHaveLength(before);
  h.clock.advance(1);
  expect(restartTimes(h, server).slice(before), `RESTART after exactly ${backoff} ms`).toEqual([start + backoff]);
  expect(received(h, 'GIVE_UP', server), 'no GIVE_UP').toHaveLength(giveUps);
}

function scheduledRestarts(h: Harness, server: string): number {
  const child = snapshotOf(h).children[server];
  return h.clock.scheduled().filter((e) => e.event.type === 'RESTART' && e.target === child).length;
}

/** Sends CONNECTION_DOWN and checks the answer is GIVE_UP, with no RESTART scheduled. */
function expectGiveUp(h: Harness, server: string, fatal = false): void {
  const before = received(h, 'GIVE_UP', server).length;
  const scheduled = scheduledRestarts(h, server);
  h.actor.send(down(server, fatal));
  expect(received(h, 'GIVE_UP', server), 'GIVE_UP').toHaveLength(before + 1);
  expect(scheduledRestarts(h, server), 'no RESTART scheduled after GIVE_UP').toBe(scheduled);
}

describe('supervisor: restart scenarios', () => {
  it('answers CONNECTION_DOWN with RESTART after exactly the exponential backoff', async () => {
    const h = startModel(spec);
    await expectRestartAfter(h, 'alpha', 100);
    await expectRestartAfter(h, 'alpha', 200);
    h.stop();
  });

  it(`GIVE_UP once maxRestarts (${policyOf('alpha').maxRestarts}) restarts happened within withinMs`, async () => {
    const h = startModel(spec);
    await expectRestartAfter(h, 'alpha', 100);
    await expectRestartAfter(h, 'alpha', 200);
    expectGiveUp(h, 'alpha');
    expect(received(h, 'GIVE_UP', 'alpha')[0]?.event.reason).toBe(
      'socket hang up (restart budget spent: 2 restarts within 10000 ms)',
    );
    h.stop();
  });

  it('the window slides: each restart frees its slot withinMs after it was counted', async () => {
    const h = startModel(spec);
    const { withinMs } = policyOf('alpha');
    await expectRestartAfter(h, 'alpha', 100); // counted at t=0
    h.clock.set(5_000);
    await expectRestartAfter(h, 'alpha', 200); // counted at t=5000
    h.clock.set(withinMs - 1);
    expectGiveUp(h, 'alpha');
    h.clock.set(withinMs);
    // The t=0 slot is free again; the backoff keeps growing (only a proven session resets it).
    await expectRestartAfter(h, 'alpha', 400); // counted at t=10000
    expectGiveUp(h, 'alpha');
    h.clock.set(5_000 + withinMs);
    await expectRestartAfter(h, 'alpha', 800);
    h.stop();
  });

  it('CONNECTION_PROVEN resets the backoff and the window; expiries scheduled before it are ignored', async () => {
    const h = startModel(spec);
    await expectRestartAfter(h, 'alpha', 100); // counted at t=0, expires at t=10000
    await expectRestartAfter(h, 'alpha', 200); // counted at t=100, expires at t=10100
    h.actor.send({ type: 'CONNECTION_PROVEN', server: 'alpha' });
    await expectRestartAfter(h, 'alpha', 100); // counted at t=300
    await expectRestartAfter(h, 'alpha', 200); // counted at t=400
    h.clock.set(10_100); // the pre-reset expiries fire and must not free budget
    expect((snapshotOf(h).context as SupervisorContext).restarts.alpha?.inWindow).toBe(2);
    expectGiveUp(h, 'alpha');
    h.clock.set(10_300);
    await expectRestartAfter(h, 'alpha', 400);
    h.stop();
  });

  it('a fatal CONNECTION_DOWN gives up at once, whatever the budget', () => {
    const h = startModel(spec);
    expectGiveUp(h, 'alpha', true);
    expect(received(h, 'GIVE_UP', 'alpha').map((r) => r.event.reason)).toEqual(['unsupported protocol version']);
    expect((snapshotOf(h).context as SupervisorContext).restarts.alpha).toMatchObject({
      inWindow: 0,
      attempt: 0,
      total: 0,
    });
    h.stop();
  });

  it("two servers' counters are independent", async () => {
    const h = startModel(spec);
    await expectRestartAfter(h, 'beta', 250);
    expectGiveUp(h, 'beta'); // beta allows 1 restart
    await expectRestartAfter(h, 'alpha', 100); // alpha starts from its own first attempt
    h.actor.send({ type: 'CONNECTION_PROVEN', server: 'alpha' });
    const { restarts } = snapshotOf(h).context as SupervisorContext;
    expect(restarts.beta).toMatchObject({ inWindow: 1, attempt: 1, total: 1, epoch: 0 });
    expect(restarts.alpha).toMatchObject({ inWindow: 0, attempt: 0, total: 1, epoch: 1 });
    h.stop();
  });
});

describe('supervisor: stop', () => {
  it('STOP sends CLOSE to each open connection and ends once all of them are done', async () => {
    const h = startModel(spec);
    h.actor.send({ type: 'STOP' });
    expect(snapshotOf(h).value).toBe('stopping');
    expect(NAMES.map((name) => received(h, 'CLOSE', name).length)).toEqual([1, 1]);
    await finishConnection(h, 'beta');
    expect(snapshotOf(h).value).toBe('stopping');
    await finishConnection(h, 'alpha');
    expect(snapshotOf(h).value).toBe('stopped');
    expect(snapshotOf(h).status).toBe('done');
    h.stop();
  });

  it('a connection closed earlier gets no CLOSE on STOP and counts as done', async () => {
    const h = startModel(spec);
    await finishConnection(h, 'alpha');
    expect(snapshotOf(h).value).toBe('running');
    expect((snapshotOf(h).context as SupervisorContext).closed).toEqual(['alpha']);
    h.actor.send({ type: 'STOP' });
    expect(received(h, 'CLOSE', 'alpha'), 'alpha was closed once, before STOP').toHaveLength(1);
    expect(received(h, 'CLOSE', 'beta')).toHaveLength(1);
    expect(snapshotOf(h).value).toBe('stopping');
    h.controls.settle('beta:close', { output: undefined });
    await flush();
    expect(snapshotOf(h).value).toBe('stopped');
    h.stop();
  });
});

describe('supervisor: failure isolation', () => {
  // A connection actor that throws sends `xstate.error.actor.<server>`; the supervisor records
  // the crash and goes on with the other servers.
  it('a crashing connection does not take the supervisor (or the other servers) down', async () => {
    const h = startModel({
      ...spec,
      implementations: (harness: Harness) => ({
        actors: {
          connection: stubConnection(harness).provide({
            actions: {
              record: ({ event }) => {
                if (event.type === 'GIVE_UP') throw new Error('bug in a connection action');
              },
            },
          }),
        },
      }),
    });
    h.actor.send(down('alpha', true)); // GIVE_UP makes the alpha stub throw
    await flush();
    expect(snapshotOf(h).status, 'the supervisor survives').toBe('active');
    h.actor.send({ type: 'STOP' });
    await finishConnection(h, 'beta');
    expect(snapshotOf(h).value, 'stop completes without the crashed connection').toBe('stopped');
    h.stop();
  });
});
