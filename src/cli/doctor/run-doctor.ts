/**
 * `mcp-supervisor doctor [server]`: checks each server step by step, in the order a connection
 * is made — config, DNS, TCP, TLS, HTTP status and path, authorization, initialize, era, tools,
 * round trip (stdio: config, command, initialize, process) — and ends each failed step with what
 * to do. The steps after a failed network step are skipped. Exit 1 when any step failed.
 */
import { isAbsolute, resolve } from 'node:path';
import which from 'which';
import { mcpRemoteAdvice, mcpRemoteTarget } from '../../config/mcp-remote.js';
import { parseServerConfig, type ServerConfig } from '../../config/server-config.js';
import type { ServerConfigInput } from '../../config/server-config.js';
import { probeHttp } from './http-probe.js';
import { checkDns, checkTcp, checkTls } from './network.js';
import { checkSession } from './session-checks.js';
import type { Store } from '../../store/types.js';
import { fail, formatStep, ok, skip, warn, type Step } from './step.js';

type ServerMap = Record<string, ServerConfigInput>;

export interface DoctorOptions {
  timeoutMs: number;
  /** Where the report goes, a line or more at a time. */
  out: (text: string) => void;
  /** The CLI's store: the logins of OAuth servers are there. */
  store?: Store | undefined;
}

/** The URL without its query (which may hold a key) or credentials. */
function shownUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function secretFree(config: ServerConfig, text: string): string {
  return config.secrets.reduce((out, secret) => (secret ? out.split(secret).join('[redacted]') : out), text);
}

async function urlSteps(
  name: string,
  config: ServerConfig & { kind: 'url' },
  input: ServerMap[string],
  timeoutMs: number,
  store: Store | undefined,
): Promise<Step[]> {
  const steps: Step[] = [
    ok('config', `${shownUrl(config.url)}, transport ${config.type}${config.auth ? ', OAuth' : ''}`),
  ];
  for (const check of [
    () => checkDns(config.url),
    () => checkTcp(config.url, timeoutMs),
    () => checkTls(config.url, timeoutMs),
  ]) {
    const step = await check();
    steps.push(step);
    if (step.outcome === 'fail') return [...steps, skip('the rest', 'skipped: fix the step above first')];
  }
  const probe = await probeHttp(
    { url: config.url, headers: config.headers, oauth: config.auth !== undefined },
    timeoutMs,
  );
  // A failed HTTP step says nothing of authorization: it is skipped with the rest, not passed.
  if (probe.http.outcome === 'fail')
    return [...steps, probe.http, skip('the rest', 'skipped: fix the step above first')];
  steps.push(probe.http, probe.authorization);
  if (probe.authorization.outcome === 'fail') return [...steps, skip('the rest', 'skipped: fix the step above first')];
  return [...steps, ...(await checkSession(name, input, 'url', timeoutMs, store))];
}

async function commandSteps(
  name: string,
  config: ServerConfig & { kind: 'command' },
  input: ServerMap[string],
  timeoutMs: number,
): Promise<Step[]> {
  const line = secretFree(config, [config.command, ...config.args].join(' '));
  const steps: Step[] = [ok('config', `stdio: ${line}${config.cwd ? ` (in ${config.cwd})` : ''}`)];
  const bridged = mcpRemoteTarget(config.command, config.args);
  if (bridged) {
    const { message, fix } = mcpRemoteAdvice(bridged);
    steps.push(warn('bridge', secretFree(config, message), secretFree(config, fix)));
  }
  const path = { ...process.env, ...config.env }.PATH;
  const found =
    isAbsolute(config.command) || config.command.includes('/')
      ? await which(resolve(config.cwd ?? '.', config.command), { nothrow: true })
      : await which(config.command, { nothrow: true, path });
  if (found === null) {
    steps.push(
      fail(
        'command',
        `${config.command}: not found${config.command.includes('/') ? '' : ' on PATH'} (or not executable)`,
        config.command === 'npx' || config.command === 'node'
          ? 'install Node.js (it brings node and npx), or give the full path in "command"'
          : 'install it, or give its full path in "command"',
      ),
    );
    return [...steps, skip('the rest', 'skipped: fix the step above first')];
  }
  steps.push(ok('command', found));
  return [...steps, ...(await checkSession(name, input, 'command', timeoutMs))];
}

/** Checks every server of `servers` in turn and prints the steps; resolves 1 when a step of any failed. */
export async function checkServers(servers: ServerMap, options: DoctorOptions): Promise<number> {
  let failed = 0;
  for (const [name, input] of Object.entries(servers)) {
    const config = parseServerConfig(name, input, { onWarning: () => {} });
    options.out(`${name}\n`);
    const steps =
      config.kind === 'url'
        ? await urlSteps(name, config, input, options.timeoutMs, options.store)
        : await commandSteps(name, config, input, options.timeoutMs);
    for (const step of steps) for (const text of formatStep(step)) options.out(`${text}\n`);
    const bad = steps.filter((step) => step.outcome === 'fail').length;
    options.out(bad === 0 ? '  all steps passed\n\n' : `  ${bad} step${bad === 1 ? '' : 's'} failed\n\n`);
    if (bad > 0) failed++;
  }
  return failed === 0 ? 0 : 1;
}
