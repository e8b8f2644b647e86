/**
 * The runtime's two faces (src/runtime/server-port.ts): the handle and what it builds hold the
 * port, which reads the context and cannot write it nor reach the machine's contract; the runtime
 * keeps that contract and the transports' sink, with no members that only pass through to a part.
 * Which part may write a context field is said by the types: a part that writes none takes the
 * context read only. The `@ts-expect-error` lines are checked by `tsc` (npm run typecheck).
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ConnectionHost } from '../../machines/connection-host.js';
import type { ReadOnlyContext } from '../../src/runtime/context/server-context.js';
import type { ServerPort } from '../../src/runtime/server-port.js';
import { ServerRuntime } from '../../src/runtime/server-runtime.js';

/** Never called: what the compiler lets a holder of each face do. */
function faces(port: ServerPort, part: ReadOnlyContext): void {
  // @ts-expect-error the transport is the slot's to write (transport/transport-slot.ts)
  port.context.transport = undefined;
  // @ts-expect-error the session's facts are the opening's to write (session/session-opening.ts)
  port.context.facts = undefined;
  // @ts-expect-error the machine's contract is the runtime's other face
  void port.closeSession;
  // @ts-expect-error nor does the port tell the machine anything
  port.context.tell({ type: 'CLOSE' });
  // @ts-expect-error a part that writes no field takes the context read only
  part.transport = undefined;
  // @ts-expect-error nor can it adopt a session's facts
  void part.adopt;
}

describe("the runtime's two faces", () => {
  it('the runtime is a port, a host for the machine and a sink for its transports', () => {
    expectTypeOf<ServerRuntime>().toMatchTypeOf<ServerPort>();
    expectTypeOf<ServerRuntime>().toMatchTypeOf<ConnectionHost>();
    expect(typeof faces).toBe('function');
  });

  it('has no member that only passes through to its context or a part', () => {
    const own = Object.getOwnPropertyNames(ServerRuntime.prototype);
    for (const passThrough of ['name', 'config', 'events', 'pending', 'gate', 'session', 'state', 'redact'])
      expect(own).not.toContain(passThrough);
    expect(own).toEqual(expect.arrayContaining(['request', 'notify', 'closeSession', 'onMessage']));
  });
});
