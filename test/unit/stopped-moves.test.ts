/**
 * A whole supervisor's stop closes each server without its actor (src/runtime/actors/stopped-moves.ts):
 * the actor is stopped and its machine makes the moves of CLOSE on the snapshot it had. What
 * `closing` and `closed` do must be what the machine says, so an action given to the machine runs
 * on this path too, in the machine's order, and `closing`'s invoked close is the host's call.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { ConnectionHost } from '../../machines/connection-host.js';
import type { ConnectionInput } from '../../machines/connection.machine.js';
import { providedConnectionMachine } from '../../src/runtime/actors/connection-actors.js';
import { registerRuntimes } from '../../src/runtime/actors/runtime-registry.js';
import { stopAndClose } from '../../src/runtime/actors/stopped-moves.js';

const INPUT: ConnectionInput = {
  server: 'docs',
  transport: 'http',
  listenerOpenTimeoutMs: 100,
  provenAfterMs: 1_000,
  keepalive: false,
};

/** A host whose transport never opens (the connection rests in `connecting`), recording what it is asked. */
function recordingHost(close: () => Promise<void>) {
  const seen: string[] = [];
  const host = {
    origin: { turn: () => new Promise<void>(() => {}), ask: () => {} },
    originKeepalive: undefined,
    connectTransport: () => new Promise(() => {}),
    holdRequests: () => seen.push('hold requests'),
    closeSession: () => {
      seen.push('close session');
      return close();
    },
    onTransition: (change: { to: string; cause: string; error: string | undefined }) =>
      seen.push(`→ ${change.to} (${change.cause}${change.error ? `: ${change.error}` : ''})`),
    scheduleRevival: () => {},
  };
  return { host: host as unknown as ConnectionHost, seen };
}

function started(host: ConnectionHost, seen: string[]) {
  // Actions given to the machine, as a change to `closing` or `closed` would add them.
  const machine = providedConnectionMachine.provide({
    actions: {
      'reject waiting requests': (_, { reason }) => seen.push(`reject waiting requests: ${reason}`),
      'settle attempt': () => seen.push('settle attempt'),
    },
  });
  const actor = createActor(machine, { input: INPUT, id: 'docs', systemId: 'docs' });
  registerRuntimes(actor.system, () => host);
  actor.start();
  seen.length = 0;
  return actor;
}

describe('a stopped connection closes by its machine', () => {
  it("runs the actions of `closing` and `closed` given to the machine, in its order, and the host's close once", async () => {
    const { host, seen } = recordingHost(() => Promise.resolve());
    const actor = started(host, seen);
    await stopAndClose(actor);
    expect(actor.getSnapshot().status).toBe('stopped');
    expect(seen).toEqual([
      'reject waiting requests: the connection was closed',
      '→ closing (close requested)',
      'close session',
      'settle attempt',
      '→ closed (closed)',
    ]);
  });

  it('a close that fails ends in `closed` with its error, as the machine says', async () => {
    const { host, seen } = recordingHost(() => Promise.reject(new Error('DELETE refused')));
    const actor = started(host, seen);
    await stopAndClose(actor);
    expect(seen.at(-1)).toBe('→ closed (close failed: DELETE refused)');
  });
});
