/**
 * Events survive the consumer's process: a consumer SIGKILLed while its push stream is open,
 * started again with the same file store, resumes its subscription from the stored cursor — the
 * events produced while it was dead arrive, none is lost and none is given to it twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { startEventsServer, type EventsServer } from '../../../servers/events-server.js';

const consumer = fileURLToPath(new URL('../../fixtures/events-consumer.ts', import.meta.url));
let server: EventsServer | undefined;
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await server?.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Consumer {
  child: ChildProcess;
  lines: string[];
  until(line: string): Promise<void>;
}

function startConsumer(url: string, store: string): Consumer {
  const child = spawn(process.execPath, ['--import', 'tsx', consumer, url, store], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: string[] = [];
  let buffer = '';
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    child,
    lines,
    async until(line) {
      const end = Date.now() + 20_000;
      while (!lines.includes(line)) {
        if (Date.now() > end)
          throw new Error(`the consumer never printed '${line}' (it printed: ${lines.join(' | ')})`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
  };
}

const eventsOf = (lines: string[]) => lines.filter((l) => l.startsWith('EVENT ')).map((l) => l.slice(6));

it('SIGKILLed mid-stream and started again with its file store: resumes from its cursor, 0 lost, 0 twice', async () => {
  server = await startEventsServer({ heartbeatMs: 200 });
  const dir = mkdtempSync(join(tmpdir(), 'events-restart-'));
  dirs.push(dir);
  const store = join(dir, 'store.json');

  const first = startConsumer(server.url, store);
  await first.until('READY c-0');
  for (let i = 0; i < 3; i++) server.emit('ticks');
  await first.until('STORED c-3');
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));

  // Produced while nobody listens.
  for (let i = 0; i < 3; i++) server.emit('ticks');

  const second = startConsumer(server.url, store);
  await second.until('STORED c-6');
  server.emit('ticks');
  await second.until('STORED c-7');

  expect(eventsOf(first.lines)).toEqual(['evt_1', 'evt_2', 'evt_3']);
  expect(eventsOf(second.lines)).toEqual(['evt_4', 'evt_5', 'evt_6', 'evt_7']);
  const reopened = server.requests.filter((r) => r.method === 'events/stream').at(-1)!;
  expect(reopened.params['cursor'], 'the second process resumed from the stored cursor').toBe('c-3');
}, 60_000);
