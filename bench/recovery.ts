/**
 * Recovery time: server back → first call answered, for ours and the official SDK's client, on
 * a server written like the SDK's examples (servers/sdk-example-server.ts):
 *
 * - restart-400: the server restarts and answers the old session with 400 "No valid session ID
 *   provided" (what most deployed servers copied);
 * - restart-404: the same server answering the spec's 404;
 * - outage: the server is down for `outageMs`, a call is issued meanwhile, then it comes back.
 *
 * Each client keeps calling (one call at a time) until a call is answered, for at most
 * `giveUpMs`; a client that never recovers is reported as such. Defaults of both clients.
 *
 *   npm run bench:recovery [-- --rounds N] [--json file]
 */
import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connect } from '../src/index.js';
import { startSdkExampleServer, type SdkExampleServer } from '../servers/sdk-example-server.js';

type Scenario = 'restart-400' | 'restart-404' | 'outage';
type ClientName = 'ours' | 'sdk';

interface Caller {
  call(): Promise<unknown>;
  close(): Promise<void>;
}

const GIVE_UP_MS = 10_000;
const OUTAGE_MS = 1_000;

async function ours(url: string): Promise<Caller> {
  const handle = await connect({ url, keepalive: false }, { name: 'bench' });
  return { call: () => handle.callTool('echo', { text: 'x' }, { timeoutMs: GIVE_UP_MS }), close: () => handle.close() };
}

async function sdk(url: string): Promise<Caller> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    call: () => client.callTool({ name: 'echo', arguments: { text: 'x' } }, undefined, { timeout: GIVE_UP_MS }),
    close: () => client.close(),
  };
}

/** Calls until one is answered; the time from `from` to that answer, or undefined past `GIVE_UP_MS`. */
async function firstAnswer(caller: Caller, from: number, pending?: Promise<unknown>): Promise<number | undefined> {
  if (pending) {
    const answered = await pending.then(
      () => true,
      () => false,
    );
    if (answered) return performance.now() - from;
  }
  while (performance.now() - from < GIVE_UP_MS) {
    try {
      await caller.call();
      return performance.now() - from;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return undefined;
}

/** One client through one scenario on a fresh server; ms from the server's return to the first answer. */
async function measure(scenario: Scenario, name: ClientName): Promise<number | undefined> {
  const server: SdkExampleServer = await startSdkExampleServer({
    unknownSessionStatus: scenario === 'restart-404' ? 404 : 400,
  });
  const caller = await (name === 'ours' ? ours(server.url) : sdk(server.url));
  try {
    await caller.call();
    if (scenario === 'outage') {
      await server.stop();
      // A call issued while the server is down (ours holds it; the SDK's fails).
      const during = caller.call();
      during.catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      await server.start();
      return await firstAnswer(caller, performance.now(), during);
    }
    await server.restart();
    // The client notices the closed keep-alive sockets on its next turn (a real restart takes longer).
    await new Promise((resolve) => setImmediate(resolve));
    return await firstAnswer(caller, performance.now());
  } finally {
    await caller.close().catch(() => {});
    await server.close();
  }
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export interface RecoveryResult {
  scenario: Scenario;
  client: ClientName;
  /** Median ms from the server's return to the first answered call, over the recovered rounds. */
  medianMs: number | undefined;
  recovered: number;
  rounds: number;
}

export async function runRecovery(rounds: number): Promise<RecoveryResult[]> {
  const results: RecoveryResult[] = [];
  for (const scenario of ['restart-400', 'restart-404', 'outage'] as const) {
    for (const client of ['ours', 'sdk'] as const) {
      const times: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const ms = await measure(scenario, client);
        if (ms !== undefined) times.push(ms);
      }
      results.push({ scenario, client, medianMs: median(times), recovered: times.length, rounds });
    }
  }
  return results;
}

export function formatRecovery(results: RecoveryResult[]): string {
  const lines = [
    `Recovery: server back -> first call answered (median of recovered rounds; gave up after ${GIVE_UP_MS} ms)`,
    '',
    '| scenario | client | recovered | median ms |',
    '| --- | --- | --- | --- |',
  ];
  for (const r of results) {
    const ms = r.medianMs === undefined ? 'never' : r.medianMs.toFixed(1);
    lines.push(`| ${r.scenario} | ${r.client} | ${r.recovered}/${r.rounds} | ${ms} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const args = process.argv.slice(2);
  const rounds = Number(args[args.indexOf('--rounds') + 1]) || 3;
  const json = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
  const results = await runRecovery(rounds);
  console.log(formatRecovery(results));
  if (json) writeFileSync(json, JSON.stringify(results, null, 2));
}
