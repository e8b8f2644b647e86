#!/usr/bin/env node
/**
 * The `mcp-supervisor` command: watch, status, tools, call, diagram, inspect, serve.
 * Exit codes: 0 done, 1 a server or a request failed, 2 a usage or configuration error.
 */
import { ConfigError } from '../core/errors.js';
import { createSupervisor, type SupervisorOptions } from '../supervisor/supervisor.js';
import { VERSION } from '../core/version.js';
import type { Fault } from './chaos.js';
import type { Demo } from './demo.js';
import { HELP, number, parse, type Parsed } from './command-line.js';
import { runCall, runDoctor, runLogout, runStatus, runTools, type CommandIo } from './commands.js';
import { prepareAuth, type AuthOptions } from './oauth-setup.js';
import { cliStore } from './cli-store.js';
import { LOG_FORMATS, type LogFormat } from './stderr-log.js';
import type { Store } from '../store/types.js';
import { Reloader } from './config-watch.js';
import { diagramText, writeDiagramFiles } from './diagrams.js';
import { describeConfigError, loadServers, UsageError, type ServerMap, type ServerSources } from './load-config.js';
import { watch } from './watch.js';
import type { runServe as RunServe } from './serve.js';
import { configFiles, PROJECT_CONFIG_FILES } from './config-discovery.js';
import { completeInputs, parseInputFlags } from './inputs.js';

interface Servers {
  servers: ServerMap;
  notes: string[];
  faults: (sup: ReturnType<typeof createSupervisor>) => Fault[];
  /** The demo's steady traffic under --chaos. */
  workload: Demo['workload'] | undefined;
  close: () => Promise<void>;
  /** What the files and flags held, before OAuth options were completed; and how to load them again. */
  loaded: ServerMap;
  sources: ServerSources;
  authOptions: AuthOptions;
  /** The CLI's store (`--store`): logins, era verdicts, tool lists. */
  store: Store;
}

async function collectServers(parsed: Parsed): Promise<Servers> {
  const { values } = parsed;
  const configs = configFiles(values, (line) => io.err(`mcp-supervisor: ${line}\n`));
  const sources: ServerSources = {
    configs,
    inputs: await completeInputs(configs, parseInputFlags(values.input ?? [])),
    url: values.url,
    command: values.command,
    args: [...(values.arg ?? []), ...parsed.trailing],
    name: values.name,
    headers: values.header ?? [],
    type: values.type,
    oauth: values.oauth ?? false,
    strict: values.strict ?? false,
  };
  const loaded = loadServers(sources);
  if (!values.demo) {
    if (Object.keys(loaded).length === 0)
      throw new UsageError(
        `no servers: give --config <file>, --url <url>, --command <cmd> or --demo (see --help); none of ${PROJECT_CONFIG_FILES.join(', ')} is here`,
      );
    if (values.chaos) throw new UsageError('--chaos needs --demo: it injects faults into the bundled demo servers');
  }
  const authOptions: AuthOptions = {
    tokenFile: values['token-file'],
    // Never without a person in front of it: a pipe or CI gets the printed URL only.
    openBrowser: !values['no-open'] && process.stdout.isTTY === true,
    print: (line) => io.err(`${line}\n`),
  };
  const auth = await prepareAuth(loaded, authOptions);
  const servers = auth.servers;
  const origin = { loaded, sources, authOptions, store: cliStore(values.store) };
  if (!values.demo) return { servers, notes: [], faults: () => [], workload: undefined, close: auth.close, ...origin };
  const demo = await import('./demo.js')
    .then(({ startDemo }) => startDemo())
    .catch(async (error: unknown) => {
      await auth.close();
      throw error;
    });
  for (const name of Object.keys(demo.servers)) {
    if (Object.hasOwn(servers, name)) {
      await Promise.all([demo.close(), auth.close()]);
      throw new UsageError(`server '${name}' is both a demo server and a configured one: rename yours`);
    }
  }
  const notes = [`demo servers: ${Object.keys(demo.servers).join(', ')}`];
  const close = async () => {
    await Promise.all([demo.close(), auth.close()]);
  };
  return {
    servers: { ...servers, ...demo.servers },
    notes,
    faults: demo.faults,
    workload: demo.workload,
    close,
    ...origin,
  };
}

const io: CommandIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

async function watchCommand(parsed: Parsed, inspector: boolean): Promise<number> {
  const { values } = parsed;
  if (parsed.words.length > 0) throw new UsageError(`${parsed.command}: unexpected '${parsed.words.join(' ')}'`);
  const chaosEvery = number(values, 'chaos-every', 4_000)!;
  const durationMs = number(values, 'duration');
  const port = number(values, 'port', inspector ? 8_080 : 0)!;
  const source = await collectServers(parsed);
  const options: SupervisorOptions = { servers: source.servers, store: source.store };
  const notes = [...source.notes];
  let stopInspector = () => {};
  let reloader: Reloader | undefined;
  try {
    if (inspector) {
      const { startInspectorBridge } = await import('./inspect.js');
      const bridge = await startInspectorBridge(port, !values['no-open'], values.host);
      stopInspector = () => bridge.stop();
      options.inspect = bridge.inspect;
      notes.unshift(`Stately inspector: open ${bridge.pageUrl} (it embeds https://stately.ai/inspect)`);
    }
    // Warnings about the files were shown when they were read.
    const sup = createSupervisor({ ...options, onWarning: () => {} });
    if (values.chaos) notes.push(`chaos: a fault every ${chaosEvery} ms`);
    const files = source.sources.configs;
    const fileServers = new Set(Object.keys(source.loaded));
    reloader = new Reloader(
      {
        load: () => loadServers(source.sources),
        prepare: (servers) => prepareAuth(servers, source.authOptions),
        fixed: Object.fromEntries(Object.entries(source.servers).filter(([name]) => !fileServers.has(name))),
        apply: (servers) => sup.apply({ servers }),
      },
      source.loaded,
      Object.fromEntries(Object.entries(source.servers).filter(([name]) => fileServers.has(name))),
    );
    if (files.length > 0 && !values.once) notes.push(`following ${files.join(', ')}: changes are applied as saved`);
    return await watch(sup, {
      once: values.once,
      ui: values.ui ? { port, host: values.host } : undefined,
      durationMs,
      plain: values.plain,
      json: values.json,
      notes,
      title: `mcp-supervisor ${inspector ? 'inspect' : 'watch'}${values.demo ? ' --demo' : ''}${values.chaos ? ' --chaos' : ''} — Ctrl-C to stop`,
      chaos: values.chaos
        ? {
            faults: source.faults(sup),
            everyMs: chaosEvery,
            workload: source.workload ? (note) => source.workload!(sup, note) : undefined,
          }
        : undefined,
      reload: { files, reload: () => reloader!.reload() },
    });
  } finally {
    await reloader?.close();
    stopInspector();
    await source.close();
  }
}

/** What `serve` says when the MCP server SDK (an optional peer: only `serve` uses it) is not installed. */
const SERVER_SDK_MISSING =
  'serve needs the MCP server SDK, an optional peer dependency that only `serve` uses: `npm install @modelcontextprotocol/server` beside mcp-supervisor (with npx: `npx -y -p mcp-supervisor -p @modelcontextprotocol/server mcp-supervisor serve …`)';

/** `serve` and the gateway load on use: every other command (and the library) runs without the server SDK. */
async function loadServe(): Promise<{ runServe: typeof RunServe }> {
  try {
    return await import('./serve.js');
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    if (code === 'ERR_MODULE_NOT_FOUND' && message?.includes("'@modelcontextprotocol/server'"))
      throw new UsageError(SERVER_SDK_MISSING);
    throw error;
  }
}

async function serveCommand(parsed: Parsed): Promise<number> {
  const { values } = parsed;
  if (parsed.words.length > 0) throw new UsageError(`serve: unexpected '${parsed.words.join(' ')}'`);
  const hold = values.hold === undefined ? undefined : Number(values.hold);
  if (hold !== undefined && !(Number.isInteger(hold) && hold >= 0))
    throw new UsageError(`--hold must be a whole number, not '${values.hold}'`);
  const drain = values['drain-ms'] === undefined ? undefined : Number(values['drain-ms']);
  if (drain !== undefined && !(Number.isInteger(drain) && drain >= 0))
    throw new UsageError(`--drain-ms must be a whole number, not '${values['drain-ms']}'`);
  const logFormat = values['log-format'] ?? 'text';
  if (!(LOG_FORMATS as readonly string[]).includes(logFormat))
    throw new UsageError(`--log-format must be one of ${LOG_FORMATS.join(', ')}, not '${logFormat}'`);
  const { runServe } = await loadServe();
  const source = await collectServers(parsed);
  const stop = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  try {
    return await runServe({
      servers: source.servers,
      store: source.store,
      configs: values.config ?? [],
      http: values.http,
      noAuth: values['no-auth'] ?? false,
      statusTool: values['status-tool'] ?? false,
      holdMs: hold,
      strictSessions: values['strict-sessions'] ?? false,
      logFormat: logFormat as LogFormat,
      drainMs: drain,
      metrics: values.metrics ?? false,
      reload: values.reload ?? false,
      allowedHosts: values['allow-host'],
      err: (text) => io.err(text),
      stop,
    });
  } finally {
    await source.close();
  }
}

async function run(argv: string[]): Promise<number> {
  const parsed = parse(argv);
  const { values } = parsed;
  if (values.help) return (io.out(HELP), 0);
  if (values.version) return (io.out(`${VERSION}\n`), 0);
  const timeoutMs = number(values, 'timeout', 30_000)!;
  switch (parsed.command) {
    case 'diagram': {
      if (parsed.words.length > 1)
        throw new UsageError(`diagram [machine]: unexpected '${parsed.words.slice(1).join(' ')}'`);
      if (values.out !== undefined) {
        for (const file of writeDiagramFiles(values.out, parsed.words[0])) io.out(`wrote ${file}\n`);
      } else io.out(diagramText(parsed.words[0]));
      return 0;
    }
    case 'watch':
      return watchCommand(parsed, false);
    case 'inspect':
      return watchCommand(parsed, true);
    case 'serve':
      return serveCommand(parsed);
    default: {
      const source = await collectServers(parsed);
      try {
        if (parsed.command === 'status') {
          if (parsed.words.length > 0) throw new UsageError(`status: unexpected '${parsed.words.join(' ')}'`);
          return await runStatus(source.servers, io, source.store);
        }
        const { store } = source;
        if (parsed.command === 'tools')
          return await runTools(source.servers, parsed.words, timeoutMs, io, values.json ?? false, store);
        if (parsed.command === 'doctor') return await runDoctor(source.servers, parsed.words, timeoutMs, io, store);
        if (parsed.command === 'logout') return await runLogout(source.servers, parsed.words, io, store);
        return await runCall(source.servers, parsed.words, timeoutMs, io, store);
      } finally {
        await source.close();
      }
    }
  }
}

async function main(): Promise<void> {
  let code: number;
  try {
    code = await run(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`mcp-supervisor: ${error.message}\n`);
      code = 2;
    } else if (error instanceof ConfigError) {
      io.err(`mcp-supervisor: invalid configuration: ${describeConfigError(error)}\n`);
      code = 2;
    } else {
      io.err(`mcp-supervisor: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      code = 1;
    }
  }
  // Everything written reaches the pipe first; then exit: sockets of stopped servers may linger a moment.
  await Promise.all([flush(process.stdout), flush(process.stderr)]);
  process.exit(code);
}

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    stream.write('', () => resolve());
  });
}

// A reader that went away (`mcp-supervisor watch | head`) ends the run like Ctrl-C does.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.emit('SIGTERM');
});

await main();
