import { createRequire } from 'node:module';
import { createActor, createMachine, SimulatedClock, type AnyActorRef } from 'xstate';
import { describe, expect, it } from 'vitest';
import { clockOf, parentOf, XSTATE_INTERNALS_WRITTEN_FOR } from '../../src/runtime/actors/xstate-internals.js';

const child = createMachine({ id: 'child' });
const parent = createMachine({ id: 'parent', invoke: { id: 'child', src: child } });

describe("XState's internals, read in one place", () => {
  it('were written for the XState installed (another major: check each read again, then move the pin)', () => {
    const { version } = createRequire(import.meta.url)('xstate/package.json') as { version: string };
    expect(Number(version.split('.')[0])).toBe(XSTATE_INTERNALS_WRITTEN_FOR);
  });

  it("read an invoked actor's parent and an actor's clock", () => {
    const clock = new SimulatedClock();
    const actor = createActor(parent, { clock }).start();
    const invoked = actor.getSnapshot().children['child'] as AnyActorRef;
    expect(parentOf(invoked)).toBe(actor);
    expect(parentOf(actor)).toBeUndefined();
    expect(clockOf(actor)).toBe(clock);
    expect(clockOf(invoked)).toBe(clock);
    actor.stop();
  });

  it('are undefined where XState keeps them elsewhere, so each reader takes its fallback', () => {
    const bare = { send: () => {}, id: 'x' } as unknown as AnyActorRef;
    const odd = { _parent: 'not an actor', clock: { setTimeout: 1 } } as unknown as AnyActorRef;
    for (const actor of [bare, odd]) {
      expect(parentOf(actor)).toBeUndefined(); // listener-actors.ts: nothing is handed over
      expect(clockOf(actor)).toBeUndefined(); // the origin keepalive runs on the real timers
    }
  });
});
