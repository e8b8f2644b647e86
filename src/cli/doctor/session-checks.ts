/**
 * `doctor`'s session steps, through the real runtime (one attempt, no restarts): initialize, the
 * protocol era, the tool count and the round-trip time of a ping; for a stdio server, the exit
 * code and stderr of a process that did not come up.
 */
import type { ServerConfigInput } from '../../config/server-config.js';
import { VERSION } from '../../core/version.js';
import type { ServerStatus } from '../../handle/status.js';
import { createSupervisor } from '../../supervisor/supervisor.js';
import type { Store } from '../../store/types.js';
import { describe, fail, ok, warn, type Step } from './step.js';

const ONE_ATTEMPT = {
  restart: { maxRestarts: 0 },
  revive: false,
  keepalive: false,
  disabled: false,
} as const;

const PINGS = 3;

function initializeFix(status: ServerStatus, kind: 'url' | 'command', timeoutMs: number): string {
  const error = status.lastError ?? '';
  if (kind === 'command')
    return 'see the process step below; run the command in a terminal to watch it fail; check "args", "env" and "cwd"';
  if (/\b401\b|unauthori[sz]ed|authoriz/i.test(error))
    return 'see the authorization step: the server wants credentials the config does not give';
  if (/timed? ?out|timeout/i.test(error))
    return `the server did not answer initialize within ${timeoutMs} ms: raise --timeout, or look at the server's own log`;
  if (/version/i.test(error))
    return 'the server and this client share no protocol version: set "protocolVersion" (docs/protocol-eras.md) or update the server';
  return "look at the server's own log; `mcp-supervisor watch` shows each state and error as they happen";
}

/** `exited with code 1`, and the last stderr lines, from what the runtime kept. */
function processStep(status: ServerStatus): Step {
  const exit = /exited with (code \S+|signal \S+)/.exec(status.lastError ?? '')?.[1];
  const tail = (status.stderrTail ?? []).slice(-8);
  const detail = `${exit ? `exited with ${exit.replace(/[;,]$/, '')}` : 'did not complete the handshake'}${
    tail.length ? `; stderr:\n${tail.map((line) => `        ${line}`).join('\n')}` : '; no stderr output'
  }`;
  return fail(
    'process',
    detail,
    "the lines above are the server's own words; a stdio server must write only JSON-RPC to stdout (logs go to stderr)",
  );
}

export async function checkSession(
  name: string,
  config: ServerConfigInput,
  kind: 'url' | 'command',
  timeoutMs: number,
  store?: Store,
): Promise<Step[]> {
  const sup = createSupervisor({
    store,
    servers: { [name]: { ...config, ...ONE_ATTEMPT, requestTimeoutMs: timeoutMs } },
    clientInfo: { name: 'mcp-supervisor-doctor', version: VERSION },
    onWarning: () => {},
  });
  try {
    await sup.start();
    const handle = sup.server(name);
    const status = handle.status();
    if (status.state !== 'ready') {
      const steps = [
        fail(
          'initialize',
          `${status.state}: ${status.lastError ?? 'no error reported'}`,
          initializeFix(status, kind, timeoutMs),
        ),
      ];
      if (kind === 'command') steps.push(processStep(status));
      return steps;
    }
    const info = status.serverInfo;
    const steps: Step[] = [
      ok(
        'initialize',
        `${info ? `${info.name} ${info.version}` : 'ready'}, protocol ${status.protocolVersion}, over ${status.transport}`,
      ),
      ok(
        'era',
        status.era === 'modern'
          ? 'modern: 2026-07-28 (stateless: server/discover, _meta on every request)'
          : 'legacy: 2025 (initialize, then a session)',
      ),
    ];
    try {
      const { tools } = await handle.listTools({ timeoutMs });
      const names = tools.map((tool) => tool.name);
      steps.push(
        tools.length > 0
          ? ok('tools', `${tools.length}: ${names.slice(0, 8).join(', ')}${names.length > 8 ? ', …' : ''}`)
          : warn('tools', '0 tools', 'the server offers no tools: check its own configuration'),
      );
    } catch (error) {
      steps.push(
        warn('tools', `tools/list failed: ${describe(error)}`, 'the server may offer only resources or prompts'),
      );
    }
    const times: number[] = [];
    for (let i = 0; i < PINGS; i++) {
      const start = performance.now();
      await handle.request('ping', {}, { timeoutMs });
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    steps.push(ok('round trip', `ping ${times[Math.floor(PINGS / 2)]!.toFixed(1)} ms (median of ${PINGS})`));
    return steps;
  } catch (error) {
    return [fail('initialize', describe(error), "look at the server's own log")];
  } finally {
    await sup.stop();
  }
}
