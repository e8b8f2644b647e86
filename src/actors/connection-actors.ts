/**
 * The connection machine's effects: each actor looks up its server's runtime by name, so one
 * provided machine serves every server.
 */
import { fromPromise } from 'xstate';
import { connectionMachine, type ConnectTransportInput, type ServerRef } from '../../machines/connection.machine.js';
import { keepaliveMachine, type ProbeInput } from '../../machines/keepalive.machine.js';
import { listenerMachine } from '../../machines/listener.machine.js';
import { sseFallbackMachine, type SseFallbackInput } from '../../machines/sse-fallback.machine.js';
import type { ServerRuntime } from '../server-runtime.js';
import { followStream } from './listener-actors.js';

export function provideConnection(lookup: (server: string) => ServerRuntime) {
  return connectionMachine.provide({
    actors: {
      'connect transport': fromPromise(({ input }: { input: ConnectTransportInput }) => lookup(input.server).connectTransport(input.transport)),
      'sse-fallback': sseFallbackMachine.provide({
        actors: { 'open legacy stream': fromPromise(({ input }: { input: SseFallbackInput }) => lookup(input.server).openLegacyTransport()) },
      }),
      keepalive: keepaliveMachine.provide({
        actors: { probe: fromPromise(({ input }: { input: ProbeInput }) => lookup(input.server).probe(input.timeoutMs)) },
      }),
      'initialize session': fromPromise(({ input }: { input: ServerRef }) => lookup(input.server).initialize()),
      authorize: fromPromise(({ input, signal }: { input: ServerRef; signal: AbortSignal }) => lookup(input.server).authorize(signal)),
      'close session': fromPromise(({ input }: { input: ServerRef }) => lookup(input.server).closeSession()),
      listener: listenerMachine.provide({ actors: { 'follow stream': followStream(lookup) } }),
    },
  });
}
