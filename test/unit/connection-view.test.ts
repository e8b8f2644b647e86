/**
 * What a server's view keeps of its machines between `sup.status()` calls (src/runtime/connection-view.ts):
 * the actors a status was read from are observed, and a child stopped since (a listener whose stream
 * opened, in a mass start after a status read) is let go at the move that stopped it, not at the next
 * status. Real XState actors; whether the child can be collected is asked of the garbage collector.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createActor, setup, spawnChild, stopChild } from 'xstate';
import type { ServerContext } from '../../src/runtime/context/server-context.js';
import { ConnectionView } from '../../src/runtime/connection-view.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const child = setup({}).createMachine({ initial: 'open', states: { open: {} } });
const parent = setup({ actors: { child } }).createMachine({
  initial: 'ready',
  states: {
    ready: {
      entry: spawnChild('child', { id: 'listener' }),
      on: { NOTHING_TO_LISTEN: { actions: stopChild('listener') } },
    },
  },
});

/** The view reads only its server's name and actor system here (confirmed(), watch()). */
function viewOf(actor: { system: unknown }): ConnectionView {
  return new ConnectionView({ name: 'files', system: actor.system } as unknown as ServerContext);
}

/** A weak reference to the child, with no strong one left in this frame. */
function childOf(actor: ReturnType<typeof createActor<typeof parent>>): WeakRef<object> {
  return new WeakRef(actor.getSnapshot().children.listener!);
}

describe('a connection view', () => {
  it('observes the machines a status was read from, and lets a child go at the move that stopped it', async () => {
    const actor = createActor(parent, { systemId: 'files' }).start();
    const view = viewOf(actor);
    view.watch();
    view.confirmed();
    expect(view.unchanged(), 'nothing moved since the status').toBe(true);
    const listener = childOf(actor);

    actor.send({ type: 'NOTHING_TO_LISTEN' });
    expect(view.unchanged(), 'the connection moved').toBe(false);
    // A WeakRef's target lives at least until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(listener.deref(), 'the stopped listener is not kept by the view').toBeUndefined();

    // The next status observes the connection only, and a move still marks it.
    view.confirmed();
    expect(view.unchanged()).toBe(true);
    actor.send({ type: 'NOTHING_TO_LISTEN' });
    expect(view.unchanged(), 'a move of the connection (no child left) still marks the view').toBe(false);
    actor.stop();
  });
});
