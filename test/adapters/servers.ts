/**
 * The real MCP servers the adapter tests run against: server-everything (Streamable HTTP, a
 * child process), the SDK example server (restartable on its port), and the tool server of the
 * catalog tests (a tool that fails, one that waits to be cancelled).
 */
import { createSupervisor, type Supervisor } from '../../src/index.js';
import { startEverythingServer, type EverythingServer } from '../../servers/everything-server.js';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { quickRestart } from '../integration/helpers.js';
import { startToolServer, type ToolServer } from '../catalog/tool-server.js';

export interface AdapterWorld {
  sup: Supervisor;
  everything: EverythingServer;
  example: SdkExampleServer;
  tools: ToolServer;
  close(): Promise<void>;
}

const fast = { restart: quickRestart(50), revive: { initialMs: 10, maxMs: 20 }, keepalive: false as const };

export async function startWorld(): Promise<AdapterWorld> {
  const [everything, example, tools] = await Promise.all([
    startEverythingServer('streamableHttp'),
    startSdkExampleServer({ unknownSessionStatus: 404 }),
    startToolServer([
      { name: 'fail', result: () => ({ content: [{ type: 'text', text: 'the disk is full' }], isError: true }) },
      { name: 'wait', hang: true },
    ]),
  ]);
  const sup = createSupervisor({
    servers: {
      everything: { url: everything.url, ...fast },
      example: { url: example.url, ...fast },
      tools: { url: tools.url, ...fast },
    },
    // server-everything's long-running and toggling tools are not for these runs.
    catalog: { servers: { everything: { deny: [/^toggle-/, 'trigger-long-running-operation'] } } },
  });
  await sup.start();
  return {
    sup,
    everything,
    example,
    tools,
    async close() {
      tools.release();
      await sup.stop();
      await Promise.all([everything.close(), example.close(), tools.close()]);
    },
  };
}

/** Waits for a condition the servers report (event-loop turns, no clock). */
export async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 20_000 && !condition(); turn++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error('the condition never held');
}
