/**
 * `npm run conformance:gateway`: the official conformance suite's **server** scenarios
 * (@modelcontextprotocol/conformance, pinned in package.json) against `mcp-supervisor serve`
 * fronting @modelcontextprotocol/server-everything, and against server-everything itself, in the
 * same run: both frozen requirement sets (2025-11-25, 2026-07-28). The gateway must pass every
 * check server-everything passes (most scenarios need the suite's own reference server's tools,
 * so server-everything fails them either way); it may pass more (it speaks 2026-07-28 and checks
 * Host). Prints a table and `conformance gateway: N passed, M failed` (one per scenario run);
 * exits 1 when the gateway loses a check. The suite needs Node >= 22: one is fetched once.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGateway } from '../src/gateway/gateway.js';
import { serveGatewayHttp } from '../src/gateway/http.js';
import { startEverythingServer } from '../servers/everything-server.js';
import { scoreRun, type Check } from './conformance-checks.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const suite = `${root}node_modules/@modelcontextprotocol/conformance/dist/index.js`;
const outDir = `${root}.conformance/gateway`;
const REQUIREMENT_SETS = ['2025-11-25', '2026-07-28'] as const;

function node22(): string {
  const found = spawnSync('npm', ['exec', '--yes', '--package=node@22', '--', 'node', '-p', 'process.execPath'], {
    encoding: 'utf8',
  });
  const path = found.stdout.trim();
  if (found.status !== 0 || !path) throw new Error(`could not get Node 22 from the npm registry:\n${found.stderr}`);
  return path;
}

/** Runs one requirement set against one URL; the checks of each scenario, by scenario. */
async function runSet(node: string, url: string, revision: string, dir: string): Promise<Map<string, Check[]>> {
  mkdirSync(dir, { recursive: true });
  // Asynchronously: the gateway under test runs in this process.
  const { spawn } = await import('node:child_process');
  await new Promise<void>((resolve) => {
    const child = spawn(node, [suite, 'server', '--url', url, '--requirements', revision, '-o', dir], {
      cwd: root,
      stdio: 'ignore',
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const byScenario = new Map<string, Check[]>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const scenario = entry.name.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    byScenario.set(scenario, scoreRun(join(dir, entry.name), 0).checks);
  }
  return byScenario;
}

const passedIds = (checks: readonly Check[] | undefined) =>
  new Set((checks ?? []).filter((c) => c.status === 'SUCCESS').map((c) => c.id));

const node = node22();
rmSync(outDir, { recursive: true, force: true });
const everything = await startEverythingServer('streamableHttp');
// One server, no prefix: the scenarios call the tools by their own names. No token on loopback:
// the suite sends none (the token check has its own tests).
const gateway = createGateway({
  servers: { everything: { url: everything.url, keepalive: false } },
  catalog: { prefix: false },
});
await gateway.start();
const http = await serveGatewayHttp(gateway, { token: undefined });

const rows: string[] = [];
let passed = 0;
let failed = 0;
let directChecks = 0;
let gatewayChecks = 0;
try {
  for (const revision of REQUIREMENT_SETS) {
    const direct = await runSet(node, everything.url, revision, `${outDir}/${revision}/direct`);
    const through = await runSet(node, http.url, revision, `${outDir}/${revision}/gateway`);
    for (const scenario of [...new Set([...direct.keys(), ...through.keys()])].sort()) {
      const want = passedIds(direct.get(scenario));
      const got = passedIds(through.get(scenario));
      directChecks += want.size;
      gatewayChecks += got.size;
      const lost = [...want].filter((id) => !got.has(id));
      const gained = [...got].filter((id) => !want.has(id));
      if (lost.length === 0) passed++;
      else failed++;
      const result = lost.length === 0 ? 'PASS' : `FAIL (lost ${lost.join(', ')})`;
      rows.push(`| ${scenario} | ${revision} | ${want.size} | ${got.size} | ${gained.join(', ')} | ${result} |`);
      if (lost.length > 0)
        for (const check of through.get(scenario) ?? [])
          if (lost.includes(check.id))
            console.log(`  ${scenario}@${revision}: ${check.id}: ${check.errorMessage ?? ''}`);
    }
  }
} finally {
  await http.close();
  await gateway.close();
  await everything.close();
}
console.log('\n| scenario | requirements | checks passed direct | through the gateway | gained | result |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const row of rows) console.log(row);
console.log(`\nchecks passed: ${directChecks} against server-everything, ${gatewayChecks} through the gateway`);
console.log(`conformance gateway: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
