/**
 * `inspect`: `watch` with the Stately inspector. `@statelyai/inspect` is an optional peer
 * dependency, loaded only here. Its bridge (a small local HTTP + WebSocket server) serves a page
 * that embeds the inspector; the supervisor's inspection events, sanitized, reach it through a
 * WebSocket, so the inspector shows the live actor tree: the supervisor, one connection per
 * server, and their listener, keepalive and sse-fallback children.
 */
import { connect, createServer } from 'node:net';
import type { InspectionEvent, Observer } from 'xstate';
import type * as StatelyInspect from '@statelyai/inspect';
import type * as StatelyInspectServer from '@statelyai/inspect/server';
import { UsageError } from './load-config.js';

export interface InspectorBridge {
  /** Where to point a browser. */
  pageUrl: string;
  /** The observer to pass as `inspect` to createSupervisor. */
  inspect: Observer<InspectionEvent>;
  stop(): void;
}

const MISSING =
  'inspect needs the optional peer dependency @statelyai/inspect: npm install --save-dev @statelyai/inspect';

async function loadInspect(): Promise<{ lib: typeof StatelyInspect; server: typeof StatelyInspectServer }> {
  try {
    const [lib, server] = await Promise.all([import('@statelyai/inspect'), import('@statelyai/inspect/server')]);
    return { lib, server };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new UsageError(MISSING);
    throw error;
  }
}

/** The bridge does not report a busy port (it would crash the process): check first. */
async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new UsageError(
          error.code === 'EADDRINUSE'
            ? `port ${port} is in use: choose another with --port`
            : `cannot listen on port ${port}: ${error.message}`,
        ),
      );
    });
    probe.listen(port, () => probe.close(() => resolve()));
  });
}

/** Resolves once something accepts connections on `port` (the bridge listens asynchronously). */
async function waitForPort(port: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, 'localhost', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`the inspector bridge did not start listening on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts the bridge on `port` (opening a browser unless `open` is false) and connects an inspector to it. */
export async function startInspectorBridge(port: number, open: boolean): Promise<InspectorBridge> {
  const { lib, server } = await loadInspect();
  await assertPortFree(port);
  const bridge = server.createInspectorServer({ port, autoOpen: open });
  await waitForPort(port);
  const inspector = lib.createWebSocketInspector({ url: `ws://localhost:${port}` });
  return {
    pageUrl: `http://localhost:${port}`,
    inspect: inspector.inspect,
    stop() {
      inspector.stop();
      bridge.stop();
    },
  };
}
