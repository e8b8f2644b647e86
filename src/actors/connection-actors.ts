/**
 * The connection machine's effects: each actor looks up its server's runtime by name, so one
 * provided machine serves every server.
 */
import { fromPromise } from 'xstate';
import { connectionMachine, type ServerRef } from '../../machines/connection.machine.js';
import { listenerMachine } from '../../machines/listener.machine.js';
import type { ServerRuntime } from '../server-runtime.js';
import { followStream } from './listener-actors.js';

export function provideConnection(lookup: (server: string) => ServerRuntime) {
  return connectionMachine.provide({
    actors: {
      'connect transport': fromPromise(({ input }: { input: ServerRef }) => lookup(input.server).connectTransport()),
      'initialize session': fromPromise(({ input }: { input: ServerRef }) => lookup(input.server).initialize()),
      'close session': fromPromise(({ input }: { input: ServerRef }) => lookup(input.server).closeSession()),
      listener: listenerMachine.provide({ actors: { 'follow stream': followStream(lookup) } }),
    },
  });
}
