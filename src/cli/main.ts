#!/usr/bin/env node
/**
 * The `mcp-supervisor` command: watch, status, tools, call, diagram, inspect, serve.
 * Exit codes: 0 done, 1 a server or a request failed, 2 a usage or configuration error.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from '../core/errors.js';
import { createSupervisor, type SupervisorOptions } from '../supervisor.js';
import { VERSION } from '../core/version.js';
import type { Fault } from './chaos.js';
import type { Demo } from './demo.js';
import { runCall, runDoctor, runLogout, runStatus, runTools, type CommandIo } from './commands.js';
import { prepareAuth, type AuthOptions } from './oauth-setup.js';
import { cliStore } from './cli-store.js';
import type { Store } from '../store/types.js';
import { Reloader } from './config-watch.js';
import { diagramText, MACHINE_NAMES, writeDiagramFiles } from './diagrams.js';
import { describeConfigError, loadServers, UsageError, type ServerMap, type ServerSources } from './load-config.js';
import { watch } from './watch.js';
import { runServe } from './serve.js';
import { configFiles, PROJECT_CONFIG_FILES } from './config-discovery.js';
import { completeInputs, parseInputFlags } from './inputs.js';

const HELP = `mcp-supervisor ${VERSION}: supervised, self-healing MCP client connections

Usage: mcp-supervisor <command> [options]

Commands:
  watch                          live view of every server (the default command); --ui: a local web dashboard too
  status                         start, wait until each server is ready or down once, print status JSON
  tools [server]                 print the server's tools as a table (--json: as JSON)
  call [server] <tool> [json]    call a tool with JSON object arguments, print the result as JSON (progress on stderr)
  doctor [server]                check each server step by step (DNS, TCP, TLS, HTTP, era, authorization, initialize,
                                 tools; stdio: command, exit code, stderr) and say what to do about a failed step
  logout [server]                revoke the server's OAuth tokens (RFC 7009, when offered) and forget them
  diagram [machine]              Mermaid stateDiagram-v2 of a machine (${MACHINE_NAMES.join(', ')}); all when omitted
  inspect                        watch, with the Stately inspector showing the live actor tree
  serve                          every server behind one MCP server, over stdio (for a host's "command") or --http

Servers (any mix):
  -c, --config <file>            an mcpServers JSON file (Claude Desktop, Claude Code, Cursor; VS Code's "servers", JSONC);
                                 repeatable; \${VAR}, \${env:VAR} expanded; watch and inspect follow its changes;
                                 without --config (and --url, --command, --demo): the first of ./.mcp.json,
                                 ./.cursor/mcp.json, ./.vscode/mcp.json
  --input <id=value>             a value for \${input:id} (VS Code); repeatable; on a terminal, missing ones are asked
  --strict                       unknown fields in a config file are errors, not warnings
  --url <url>                    one HTTP server (Streamable HTTP; a path ending in /sse means legacy SSE)
  --command <cmd>                one stdio server; its arguments with --arg (repeatable) or after --
  --arg <arg>                    an argument of --command
  --name <name>                  the name of the --url / --command server (default: the host / the command)
  -H, --header 'Name: value'     a header for the --url server; repeatable
  --type <auto|http|sse|stdio>   the transport of the --url / --command server
  --oauth                        the --url server uses the built-in OAuth 2.1 client (a config file: "auth": {…})
  --demo                         the bundled demo servers (from a source checkout: npm start)
  [server] may be left out when only one server is configured.

watch and inspect:
  --once                         print the table once every server is ready or down, then exit (1 if any is not ready)
  --duration <ms>                stop after this long (otherwise Ctrl-C)
  --plain                        one line per transition even on a terminal
  --json                         watch: one JSON object per event (NDJSON); tools: the tools/list result as JSON
  --chaos                        with --demo: inject a fault every few seconds and watch the machines heal
  --chaos-every <ms>             time between faults (default 4000)
  --ui                           watch: serve the dashboard (a local web page) and print its URL
  --port <n>                     watch --ui: the dashboard's port (default: a free one); inspect: the bridge's (default 8080)
  --host <addr>                  watch --ui and inspect: the address to listen on (default 127.0.0.1)

serve (docs/gateway.md):
  --http [host:]port             Streamable HTTP at http://host:port/mcp instead of stdio (host default 127.0.0.1)
  --no-auth                      --http without a bearer token (default: $MCP_SUPERVISOR_TOKEN, or one generated and printed)
  --status-tool                  add the mcp_supervisor_status tool (every server's state, for the model)
  --hold <ms>                    how long a request waits for a server that is down (default 30000)

Authorization (OAuth servers):
  --store <file>                 where logins, era verdicts and tool lists are kept, shared by every run (0600;
                                 default $MCP_SUPERVISOR_STORE or ~/.mcp-supervisor/store.json)
  --token-file <file>            the token file of earlier versions, read for a login the store lacks
                                 (default $MCP_SUPERVISOR_TOKEN_FILE or ~/.mcp-supervisor/tokens.json)
  --no-open                      only print authorization URLs (and inspect's page); by default a browser opens on a terminal

Other:
  --timeout <ms>                 tools / call: request timeout (default 30000)
  --out <dir>                    diagram: write <dir>/<machine>.mmd instead of printing
  -h, --help                     this help
  -v, --version                  the version

Exit codes: 0 done, 1 a server or a request failed, 2 a usage or configuration error.
`;

const OPTIONS = {
  config: { type: 'string', short: 'c', multiple: true },
  input: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  url: { type: 'string' },
  command: { type: 'string' },
  arg: { type: 'string', multiple: true },
  name: { type: 'string' },
  header: { type: 'string', short: 'H', multiple: true },
  type: { type: 'string' },
  oauth: { type: 'boolean' },
  strict: { type: 'boolean' },
  'token-file': { type: 'string' },
  store: { type: 'string' },
  demo: { type: 'boolean' },
  once: { type: 'boolean' },
  duration: { type: 'string' },
  plain: { type: 'boolean' },
  chaos: { type: 'boolean' },
  'chaos-every': { type: 'string' },
  port: { type: 'string' },
  ui: { type: 'boolean' },
  host: { type: 'string' },
  'no-open': { type: 'boolean' },
  timeout: { type: 'string' },
  out: { type: 'string' },
  http: { type: 'string' },
  'no-auth': { type: 'boolean' },
  'status-tool': { type: 'boolean' },
  hold: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

const COMMANDS = ['watch', 'status', 'tools', 'call', 'logout', 'diagram', 'inspect', 'doctor', 'serve'] as const;
type Command = (typeof COMMANDS)[number];
type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; tokens: true; allowPositionals: true }>>['values'];

interface Parsed {
  command: Command;
  words: string[];
  values: Values;
  /** Arguments after `--`: the --command server's. */
  trailing: string[];
}

function parse(argv: string[]): Parsed {
  let result;
  try {
    result = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const terminator = result.tokens.find((token) => token.kind === 'option-terminator')?.index ?? Infinity;
  const positionals = result.tokens.filter((token) => token.kind === 'positional');
  const words = positionals.filter((token) => token.index < terminator).map((token) => token.value);
  const trailing = positionals.filter((token) => token.index > terminator).map((token) => token.value);
  const first = words.shift() ?? 'watch';
  if (!(COMMANDS as readonly string[]).includes(first))
    throw new UsageError(`unknown command '${first}': one of ${COMMANDS.join(', ')}`);
  return { command: first as Command, words, values: result.values, trailing };
}

function number(
  values: Values,
  option: 'duration' | 'chaos-every' | 'port' | 'timeout',
  fallback?: number,
): number | undefined {
  const text = values[option];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`--${option} must be a whole number, not '${text}'`);
  return value;
}

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

async function serveCommand(parsed: Parsed): Promise<number> {
  const { values } = parsed;
  if (parsed.words.length > 0) throw new UsageError(`serve: unexpected '${parsed.words.join(' ')}'`);
  const hold = values.hold === undefined ? undefined : Number(values.hold);
  if (hold !== undefined && !(Number.isInteger(hold) && hold >= 0))
    throw new UsageError(`--hold must be a whole number, not '${values.hold}'`);
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
