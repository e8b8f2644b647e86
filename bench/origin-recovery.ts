/**
 * Recovery after an outage with callers waiting (issue 28): the server comes back → how long until
 * the waiting calls are answered, and how hard the clients knock on the origin meanwhile. Default
 * settings of `createSupervisor`, on real servers (servers/http-fixture.ts behind
 * servers/origin-switch.ts, which plays the outage by closing the port).
 *
 * - one: one server, 10 callers, down for `--outage-ms` (default 20 s);
 * - origin: `--servers` servers (default 200) on one origin, 10 callers each, down as long;
 * - cold: as many servers started while their origin is down (a cold start), down as long: the
 *   first attempts take the origin's turns too (attempts are counted as moves into `discovering`:
 *   an attempt that took another's verdict goes from `connecting` to `reconnecting` without knocking).
 *
 * Reported next to today's behaviour: with `--base <dir>` (a checkout of the base commit with
 * node_modules, run under tsx) its own `createSupervisor` runs the same scenarios side by side;
 * without it, "today-like" is this build with the waiting cap off (`waitingReconnectMs` = the
 * backoff's maxMs), which keeps the per-origin turns (so it understates today's attempts).
 *
 *   npm run bench:origin [-- --outage-ms 20000 --servers 200 --base /path/to/base --only cold|one|origin --json file]
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startHttpFixture } from '../servers/http-fixture.js';
import { startOriginSwitch } from '../servers/origin-switch.js';
import * as current from '../src/index.js';

type CreateSupervisor = typeof current.createSupervisor;

function arg(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

const OUTAGE_MS = Number(arg('outage-ms') ?? 20_000);
const SERVERS = Number(arg('servers') ?? 200);
const CALLERS = 10;
const ONLY = arg('only');
const CALL_TIMEOUT_MS = OUTAGE_MS + 60_000;

interface Result {
  build: string;
  scenario: string;
  servers: number;
  /** Server back → first waiting call answered. */
  firstAnswerMs: number | undefined;
  /** Server back → every waiting call answered. */
  allAnsweredMs: number | undefined;
  failedCalls: number;
  /** Connection attempts (moves into `connecting`) per second at the origin during the outage. */
  attemptsPerSecond: number;
  peakAttemptsInOneSecond: number;
  /** `initialize` / `server/discover` requests the server saw in the first second after its return. */
  handshakesFirstSecond: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

async function run(build: string, create: CreateSupervisor, servers: number, extra: object): Promise<Result> {
  const fixture = await startHttpFixture();
  const front = await startOriginSwitch({ port: Number(new URL(fixture.url).port) });
  const config = Object.fromEntries(
    Array.from({ length: servers }, (_, i) => [`s${i}`, { url: `${front.origin}/mcp`, ...extra }]),
  );
  const sup = create({ servers: config });
  await sup.start();
  const attempts: number[] = [];
  sup.on('transition', (t) => {
    if (t.to === 'connecting' && t.from !== null) attempts.push(performance.now());
  });
  await front.set('down');
  await sleep(20); // the clients see their sockets close (a call written on one is an outcome unknown)
  const downAt = performance.now();
  let first: number | undefined;
  let failed = 0;
  const calls: Promise<void>[] = [];
  for (let i = 0; i < servers; i++)
    for (let c = 0; c < CALLERS; c++)
      calls.push(
        sup
          .server(`s${i}`)
          .callTool('echo', { text: 'x' }, { timeoutMs: CALL_TIMEOUT_MS })
          .then(
            () => void (first ??= performance.now()),
            () => void failed++,
          ),
      );
  await sleep(OUTAGE_MS);
  const during = attempts.filter((at) => at >= downAt).length;
  const perSecond = new Map<number, number>();
  for (const at of attempts)
    if (at >= downAt)
      perSecond.set(Math.floor((at - downAt) / 1000), (perSecond.get(Math.floor((at - downAt) / 1000)) ?? 0) + 1);
  const handshakesBefore = fixture.requests.filter(
    (r) => r.rpcMethod === 'initialize' || r.rpcMethod === 'server/discover',
  ).length;
  await front.set('up');
  const upAt = performance.now();
  let handshakesFirstSecond = 0;
  const counting = sleep(1_000).then(() => {
    handshakesFirstSecond =
      fixture.requests.filter((r) => r.rpcMethod === 'initialize' || r.rpcMethod === 'server/discover').length -
      handshakesBefore;
  });
  await Promise.all(calls);
  const allAt = performance.now();
  await counting;
  await sup.stop();
  await front.close();
  await fixture.close();
  return {
    build,
    scenario: servers === 1 ? 'one' : 'origin',
    servers,
    firstAnswerMs: first === undefined ? undefined : Math.max(0, Math.round(first - upAt)),
    allAnsweredMs: failed === servers * CALLERS ? undefined : Math.round(allAt - upAt),
    failedCalls: failed,
    attemptsPerSecond: Math.round((during / (OUTAGE_MS / 1000)) * 10) / 10,
    peakAttemptsInOneSecond: Math.max(0, ...perSecond.values()),
    handshakesFirstSecond,
  };
}

interface ColdResult {
  build: string;
  servers: number;
  /** `start()` called → resolved (every server's first outcome). */
  startMs: number;
  /** Attempts that reached the origin in the first second, and per second over the outage. */
  firstSecondAttempts: number;
  attemptsPerSecond: number;
  peakAttemptsInOneSecond: number;
  /** Origin back → every server ready. */
  allReadyMs: number | undefined;
}

async function runCold(build: string, create: CreateSupervisor, servers: number, extra: object): Promise<ColdResult> {
  const fixture = await startHttpFixture();
  const front = await startOriginSwitch({ port: Number(new URL(fixture.url).port) });
  await front.set('down');
  const config = Object.fromEntries(
    Array.from({ length: servers }, (_, i) => [`s${i}`, { url: `${front.origin}/mcp`, ...extra }]),
  );
  const sup = create({ servers: config });
  const knocks: number[] = [];
  let ready = 0;
  sup.on('transition', (t) => {
    if (t.to === 'discovering') knocks.push(performance.now());
    if (t.to === 'ready') ready++;
  });
  const startAt = performance.now();
  await sup.start();
  const startMs = Math.round(performance.now() - startAt);
  await sleep(Math.max(0, OUTAGE_MS - startMs));
  const perSecond = new Map<number, number>();
  for (const at of knocks)
    perSecond.set(Math.floor((at - startAt) / 1000), (perSecond.get(Math.floor((at - startAt) / 1000)) ?? 0) + 1);
  const during = knocks.length;
  await front.set('up');
  const upAt = performance.now();
  // Idle servers keep the long backoff: up to `maxMs` (30 s by default) after the return.
  const deadline = upAt + 60_000;
  while (ready < servers && performance.now() < deadline) await sleep(50);
  const allReadyMs = ready >= servers ? Math.round(performance.now() - upAt) : undefined;
  await sup.stop();
  await front.close();
  await fixture.close();
  return {
    build,
    servers,
    startMs,
    firstSecondAttempts: perSecond.get(0) ?? 0,
    attemptsPerSecond: Math.round((during / (OUTAGE_MS / 1000)) * 10) / 10,
    peakAttemptsInOneSecond: Math.max(0, ...perSecond.values()),
    allReadyMs,
  };
}

async function main(): Promise<void> {
  const base = arg('base');
  const builds: Array<{ build: string; create: CreateSupervisor; extra: object }> = [
    { build: 'this build (defaults)', create: current.createSupervisor, extra: {} },
  ];
  if (base) {
    const today = (await import(pathToFileURL(resolve(base, 'src/index.ts')).href)) as typeof current;
    builds.push({ build: 'base commit (defaults)', create: today.createSupervisor, extra: {} });
  } else {
    builds.push({
      build: 'today-like (waiting cap off)',
      create: current.createSupervisor,
      extra: { restart: { waitingReconnectMs: 30_000 } },
    });
  }
  const results: Array<Result | ColdResult> = [];
  for (const { build, create, extra } of ONLY === undefined || ONLY === 'cold' ? builds : []) {
    const cold = await runCold(build, create, SERVERS, extra);
    results.push(cold);
    console.log(
      `cold   ${String(SERVERS).padStart(4)} server(s) started with the origin down ${OUTAGE_MS / 1000} s, ${build}: ` +
        `start() ${cold.startMs} ms; attempts at the origin ${cold.firstSecondAttempts} in the first second, ` +
        `${cold.attemptsPerSecond}/s over the outage (peak ${cold.peakAttemptsInOneSecond} in one second); ` +
        `all ready ${cold.allReadyMs ?? 'not within 60 s'} ms after the return (idle: the long backoff)`,
    );
  }
  for (const servers of [1, SERVERS].filter((n) => ONLY === undefined || ONLY === (n === 1 ? 'one' : 'origin')))
    for (const { build, create, extra } of builds) {
      const result = await run(build, create, servers, extra);
      results.push(result);
      console.log(
        `${result.scenario.padEnd(6)} ${String(servers).padStart(4)} server(s), down ${OUTAGE_MS / 1000} s, ${build}: ` +
          `first answer ${result.firstAnswerMs ?? 'never'} ms after the return, all ${result.allAnsweredMs ?? 'never'} ms, ` +
          `${result.failedCalls} failed; attempts ${result.attemptsPerSecond}/s at the origin (peak ${result.peakAttemptsInOneSecond} in one second), ` +
          `${result.handshakesFirstSecond} handshakes in the first second back`,
      );
    }
  const json = arg('json');
  if (json) writeFileSync(json, JSON.stringify({ outageMs: OUTAGE_MS, callers: CALLERS, results }, null, 2));
}

await main();
