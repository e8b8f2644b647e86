/**
 * A planned restart of `serve --http` that never refuses a connection (issue #43, item 3):
 * `serve --reload` on SIGHUP starts its successor on the same listening socket, waits until it
 * listens, then drains. A plain Python host — the official SDK's `ClientSession`, no retries,
 * which dies on a single refused connection — calls every 100 ms throughout: 0 errors, the same
 * session (taken up by the successor from the file store).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { TOKEN } from '../gateway/helpers.js';
import { startServe, type GatewayProcess } from '../gateway/serve-process.js';
import { pythonWithMcp, startPythonHost } from './python-host.js';

let upstream: SdkExampleServer;
let dir: string;
let serve: GatewayProcess | undefined;
let successor: number | undefined;

beforeAll(async () => {
  pythonWithMcp();
  upstream = await startSdkExampleServer({ unknownSessionStatus: 404 });
  dir = mkdtempSync(join(tmpdir(), 'gateway-reload-'));
}, 180_000);

afterAll(async () => {
  await serve?.kill('SIGKILL');
  if (successor !== undefined) process.kill(successor, 'SIGKILL');
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('serve --reload', () => {
  it('SIGHUP: the successor takes the socket over, the old process drains; a plain Python host sees 0 errors', async () => {
    const config = join(dir, 'servers.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { example: { url: upstream.url, keepalive: false } } }));
    serve = await startServe(
      ['--config', config, '--http', '127.0.0.1:0', '--store', join(dir, 'store.json'), '--reload'],
      { MCP_SUPERVISOR_TOKEN: TOKEN },
    );
    const python = startPythonHost(serve.url, { token: TOKEN });
    try {
      await python.until((line) => line.i === 10);
      serve.child.kill('SIGHUP');
      const reloaded = await serve.waitForStderr(/reloaded: pid (\d+)/);
      successor = Number(/\d+/.exec(reloaded)![0]);
      expect(await serve.exited).toBe(0);
      python.say('mark');
      await python.until((line) => line.event === 'mark');
      const marked = python.lines.length;
      await python.until((line) => line.i !== undefined && python.lines.indexOf(line) >= marked + 20);
      const done = await python.stop();

      expect(python.lines.filter((line) => line.event === 'died')).toEqual([]);
      expect(python.lines.filter((line) => line.i !== undefined && !line.ok)).toEqual([]);
      expect(python.lines.filter((line) => line.i !== undefined).length).toBeGreaterThan(30);
      expect(done.session_ids).toBe(1);
      // The successor's lines come to the same stderr: it listened on the inherited socket and took the session up.
      expect(serve.stderr()).toMatch(/listening on \S+ \(pid \d+, an inherited socket\)/);
      await expect.poll(() => serve!.stderr()).toMatch(/host session \S+ restored/);
    } finally {
      if (python.child.exitCode === null) python.child.kill('SIGKILL');
    }
  });
});
