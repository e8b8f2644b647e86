import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  lookUpUndiciInternals,
  UNDICI_INTERNALS_WRITTEN_FOR,
  undiciInternals,
} from '../../src/transports/undici-internals.js';

const server = createServer((_req, res) => res.end('ok'));
let origin = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("undici's internals, read in one place", () => {
  it('were written for the undici installed (another major: check each lookup again, then move the pin)', () => {
    const { version } = createRequire(import.meta.url)('undici/package.json') as { version: string };
    expect(Number(version.split('.')[0])).toBe(UNDICI_INTERNALS_WRITTEN_FOR);
  });

  it('are all found in this undici, and read from a real pool and its client', async () => {
    expect(undiciInternals.request).toBeDefined();
    expect(undiciInternals.dropsIdleClients).toBe(true);
    const pool = new Pool(origin, { connections: 1 });
    try {
      expect(undiciInternals.busy(pool)).toBe(false);
      const answer = await pool.request({ path: '/', method: 'GET' });
      await answer.body.text();
      const clients = undiciInternals.clients(pool);
      expect(clients).toHaveLength(1);
      expect(undiciInternals.queued(clients![0]!)).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('are undefined where undici keeps them elsewhere, so each reader takes its fallback', async () => {
    const moved = [
      lookUpUndiciInternals(() => {
        throw new Error('Cannot find module');
      }),
      lookUpUndiciInternals(() => ({ RequestHandler: 'not a class', kBusy: 'kBusy', kClients: 1, kSize: null })),
    ];
    const pool = new Pool(origin, { connections: 1 });
    try {
      const answer = await pool.request({ path: '/', method: 'GET' });
      await answer.body.text();
      const client = undiciInternals.clients(pool)![0]!;
      for (const internals of moved) {
        expect(internals.request).toBeUndefined(); // json-answer.ts: pool.request for every POST
        expect(internals.busy(pool)).toBeUndefined(); // pool.ts hasRoom: pool.stats counts
        expect(internals.clients(pool)).toBeUndefined();
        expect(internals.queued(client)).toBeUndefined();
        expect(internals.dropsIdleClients).toBe(false); // pool.ts: idle clients stay
      }
    } finally {
      await pool.close();
    }
  });
});
