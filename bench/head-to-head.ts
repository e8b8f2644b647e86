/**
 * The head-to-head: the same script for every client a TypeScript agent is likely to use, bare
 * and over our transport, and for our own `connect()`. The server is written like the official
 * SDK's examples (servers/sdk-example-server.ts); each client is built once per scenario:
 *
 * - restart-400: the server restarts while the client is idle and answers the old session with
 *   400 "No valid session ID provided" (what most deployed servers copied);
 * - restart-404: the same, answering the spec's 404;
 * - outage: the server is down for `OUTAGE_MS` (2 s) while a call is made, then comes back.
 *
 * After the server is back the client makes `CALLS` calls one after the other (each one try, no
 * retry of ours): "answered" counts those with an answer. Then it keeps calling every 20 ms until
 * one is answered: "first answer" is the time from the server's return to that answer (the call
 * made during the outage counts), or "never" within `GIVE_UP_MS`. Every client with its defaults.
 *
 *   npx tsx bench/head-to-head.ts [--json file]
 */
import { writeFileSync } from 'node:fs';
import { createMCPClient } from '@ai-sdk/mcp';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { connect } from '../src/index.js';
import { supervisedTransport } from '../src/adapters/sdk/index.js';
import { supervisedMcpTransport } from '../src/adapters/ai-sdk/index.js';
import { startSdkExampleServer, type SdkExampleServer } from '../servers/sdk-example-server.js';

type Scenario = 'restart-400' | 'restart-404' | 'outage';

interface Caller {
  call(): Promise<unknown>;
  close(): Promise<void>;
}

const OUTAGE_MS = 2_000;
const GIVE_UP_MS = 5_000;
const CALLS = 5;
const ECHO = { name: 'echo', arguments: { text: 'x' } };

const CLIENTS: Record<string, (url: string) => Promise<Caller>> = {
  'SDK v1 Client': async (url) => v1(new HttpV1(new URL(url))),
  'SDK v1 Client + supervisedTransport': async (url) => v1(supervisedTransport({ url })),
  'SDK v2 Client': async (url) => v2(new HttpV2(new URL(url))),
  'SDK v2 Client + supervisedTransport': async (url) => v2(supervisedTransport({ url })),
  'AI SDK createMCPClient': async (url) => aiSdk(await createMCPClient({ transport: { type: 'http', url } })),
  'AI SDK createMCPClient + supervisedMcpTransport': async (url) =>
    aiSdk(await createMCPClient({ transport: supervisedMcpTransport({ url }) })),
  'mcp-supervisor connect()': async (url) => {
    const handle = await connect({ url }, { name: 'head-to-head' });
    return {
      call: () => handle.callTool('echo', ECHO.arguments, { timeoutMs: GIVE_UP_MS }),
      close: () => handle.close(),
    };
  },
};

async function v1(transport: Parameters<ClientV1['connect']>[0]) {
  const client = new ClientV1({ name: 'head-to-head', version: '1.0.0' });
  client.onerror = () => {}; // the bare transport reports its failures here too
  await client.connect(transport);
  return {
    call: () => client.callTool(ECHO, undefined, { timeout: GIVE_UP_MS }),
    close: () => client.close(),
  };
}

async function v2(transport: Parameters<ClientV2['connect']>[0]) {
  const client = new ClientV2({ name: 'head-to-head', version: '1.0.0' });
  client.onerror = () => {};
  await client.connect(transport);
  return { call: () => client.callTool(ECHO, { timeout: GIVE_UP_MS }), close: () => client.close() };
}

function aiSdk(client: Awaited<ReturnType<typeof createMCPClient>>): Caller {
  return {
    call: async () => {
      const tools = await client.tools();
      return tools['echo']!.execute(ECHO.arguments, { toolCallId: 'x', messages: [] });
    },
    close: () => client.close(),
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answered(call: Promise<unknown>): Promise<boolean> {
  return call.then(
    () => true,
    () => false,
  );
}

export interface HeadToHeadResult {
  client: string;
  scenario: Scenario;
  /** Of `CALLS` calls made one after the other once the server is back. */
  answered: number;
  /** ms from the server's return to the first answer; undefined: none within GIVE_UP_MS. */
  firstAnswerMs: number | undefined;
}

async function run(client: string, scenario: Scenario): Promise<HeadToHeadResult> {
  const server: SdkExampleServer = await startSdkExampleServer({
    unknownSessionStatus: scenario === 'restart-404' ? 404 : 400,
  });
  const caller = await CLIENTS[client]!(server.url);
  try {
    await caller.call();
    let during: Promise<boolean> | undefined;
    if (scenario === 'outage') {
      await server.stop();
      during = answered(caller.call());
      await pause(OUTAGE_MS);
      await server.start();
    } else {
      await server.restart();
      await new Promise((resolve) => setImmediate(() => setImmediate(resolve))); // a real restart takes longer than a tick
    }
    const back = performance.now();
    let firstAnswerMs: number | undefined;
    if (during && (await during)) firstAnswerMs = performance.now() - back;
    let count = 0;
    for (let i = 0; i < CALLS; i++) {
      if (await answered(caller.call())) {
        count++;
        firstAnswerMs ??= performance.now() - back;
      }
    }
    while (firstAnswerMs === undefined && performance.now() - back < GIVE_UP_MS) {
      if (await answered(caller.call())) firstAnswerMs = performance.now() - back;
      else await pause(20);
    }
    return { client, scenario, answered: count, firstAnswerMs };
  } finally {
    await caller.close().catch(() => {});
    await server.close();
  }
}

export async function runHeadToHead(): Promise<HeadToHeadResult[]> {
  const results: HeadToHeadResult[] = [];
  for (const client of Object.keys(CLIENTS))
    for (const scenario of ['restart-400', 'restart-404', 'outage'] as const) results.push(await run(client, scenario));
  return results;
}

export function formatHeadToHead(results: HeadToHeadResult[]): string {
  const cell = (r: HeadToHeadResult | undefined) =>
    r === undefined
      ? ''
      : `${r.answered}/${CALLS}, ${r.firstAnswerMs === undefined ? 'never' : `${Math.round(r.firstAnswerMs)} ms`}`;
  const lines = [
    `Calls answered after the server is back (of ${CALLS}, one try each), and the time to the first answer (never: none within ${GIVE_UP_MS / 1000} s)`,
    '',
    `| client | restart, 400 for the old session | restart, 404 | ${OUTAGE_MS / 1000} s outage |`,
    '| --- | --- | --- | --- |',
  ];
  for (const client of new Set(results.map((r) => r.client))) {
    const of = (scenario: Scenario) => results.find((r) => r.client === client && r.scenario === scenario);
    lines.push(`| ${client} | ${cell(of('restart-400'))} | ${cell(of('restart-404'))} | ${cell(of('outage'))} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const args = process.argv.slice(2);
  const json = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
  const results = await runHeadToHead();
  console.log(formatHeadToHead(results));
  if (json) writeFileSync(json, JSON.stringify(results, null, 2));
}
