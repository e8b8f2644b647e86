/**
 * `inspect`: `watch` with the Stately inspector. `@statelyai/inspect` is an optional peer
 * dependency, loaded only here. The bridge (a small local HTTP + WebSocket server, as the
 * package's own `createInspectorServer` but listening on 127.0.0.1 only, refusing other hosts and
 * other pages' sockets) serves a page that embeds the inspector; the supervisor's inspection
 * events, sanitized, reach it through the WebSocket, so the inspector shows the live actor tree:
 * the supervisor, one connection per server, and their listener, keepalive and sse-fallback children.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { InspectionEvent, Observer } from 'xstate';
import type * as StatelyInspect from '@statelyai/inspect';
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
const INSPECTOR_URL = 'https://stately.ai/inspect';
/** What a page that opens late still gets. */
const BUFFERED = 200;

/** The parts of the `ws` package (a dependency of @statelyai/inspect) the bridge uses. */
interface Socket {
  readonly readyState: number;
  send(data: string): void;
  on(event: 'message', listener: (data: Buffer) => void): void;
}
interface SocketServer {
  readonly clients: Set<Socket>;
  on(event: 'connection', listener: (socket: Socket) => void): void;
  close(): void;
}
interface WsModule {
  WebSocketServer: new (options: {
    server: Server;
    verifyClient: (info: { origin?: string }) => boolean;
  }) => SocketServer;
}

async function loadInspect(): Promise<{ lib: typeof StatelyInspect; ws: WsModule }> {
  try {
    const lib = await import('@statelyai/inspect');
    // `ws` as @statelyai/inspect resolves it: its dependency, not ours.
    const ws = createRequire(import.meta.resolve('@statelyai/inspect'))('ws') as WsModule;
    return { lib, ws };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new UsageError(MISSING);
    throw error;
  }
}

function bridgePage(socketUrl: string): string {
  return `<!DOCTYPE html>
<html><head><title>Stately Inspector</title>
<style>* { margin: 0; padding: 0; } html, body { height: 100%; } iframe { width: 100%; height: 100%; border: none; }</style>
</head><body>
<iframe id="inspector" src="${INSPECTOR_URL}"></iframe>
<script>
  const iframe = document.getElementById('inspector');
  const buffer = [];
  let connected = false;
  window.addEventListener('message', (e) => {
    if (e.data && e.data.type === '@statelyai.connected') {
      connected = true;
      buffer.forEach((event) => iframe.contentWindow.postMessage(event, '*'));
      buffer.length = 0;
    }
  });
  const ws = new WebSocket('${socketUrl}');
  ws.onmessage = (event) => {
    const data = JSON.parse(event.data);
    if (connected) iframe.contentWindow.postMessage(data, '*');
    else buffer.push(data);
  };
</script>
</body></html>`;
}

function openBrowser(url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  execFile(opener, [url], () => {});
}

/**
 * Starts the bridge on `host:port` (127.0.0.1 unless told otherwise; a browser opens unless
 * `open` is false) and connects an inspector to it.
 */
export async function startInspectorBridge(port: number, open: boolean, host = '127.0.0.1'): Promise<InspectorBridge> {
  const { lib, ws } = await loadInspect();
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const pageUrl = `http://${shown}:${port}`;
  const names = new Set([`${shown}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`]);
  const server = createServer((request, response) => {
    // A page reached through another name (DNS rebinding) is refused.
    if (!names.has(request.headers.host ?? '') && shown === host) {
      response.writeHead(403).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(bridgePage(`ws://${shown}:${port}`));
  });
  // The inspector in this process sends no Origin; a browser tab may connect only from the bridge's page.
  const sockets = new ws.WebSocketServer({
    server,
    verifyClient: ({ origin }) => origin === undefined || names.has(origin.replace(/^http:\/\//, '')),
  });
  const buffered: string[] = [];
  sockets.on('connection', (socket) => {
    for (const message of buffered) socket.send(message);
    socket.on('message', (data) => {
      const message = data.toString();
      buffered.push(message);
      if (buffered.length > BUFFERED) buffered.shift();
      for (const client of sockets.clients) if (client !== socket && client.readyState === 1) client.send(message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new UsageError(
          error.code === 'EADDRINUSE'
            ? `port ${port} is in use: choose another with --port`
            : `cannot listen on ${host}:${port}: ${error.message}`,
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  if (open) openBrowser(pageUrl);
  const inspector = lib.createWebSocketInspector({ url: `ws://${shown}:${port}` });
  return {
    pageUrl,
    inspect: inspector.inspect,
    stop() {
      inspector.stop();
      sockets.close();
      server.close();
      server.closeAllConnections();
    },
  };
}
