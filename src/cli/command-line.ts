/** The command line: the help text, the options, and reading argv into a command and its values. */
import { parseArgs } from 'node:util';
import { VERSION } from '../core/version.js';
import { MACHINE_NAMES } from './diagrams.js';
import { UsageError } from './load-config.js';
import { describeError } from '../core/errors.js';

export const HELP = `mcp-supervisor ${VERSION}: supervised, self-healing MCP client connections

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
  --drain-ms <ms>                --http: on SIGTERM/SIGINT, how long requests in flight may take to finish before exit
                                 (default 10000); new sessions are refused and GET streams end meanwhile
  --allow-host <name>            --http: a Host/Origin name accepted besides the loopback ones (a Service's name when
                                 bound to 0.0.0.0); repeatable
  --reload                       --http: on SIGHUP, start a new process on the same listening socket, then drain this
                                 one (no connection refused); under systemd, socket activation (LISTEN_FDS) does it
  --metrics                      --http: GET /metrics in Prometheus text (needs @opentelemetry/sdk-metrics and
                                 @opentelemetry/exporter-prometheus); GET /healthz and /readyz are always there
  --log-format <text|json>       the log on stderr (upstream transitions, host sessions): text lines (default) or JSON
  --strict-sessions              --http: a session id found neither in memory nor in the store gets 404 (default:
                                 the session is adopted, so that hosts never strand after a restart)

Authorization (OAuth servers):
  --store <file|redis-url>       where logins, era verdicts, tool lists and serve's host sessions are kept, shared by
                                 every run (a file: 0600; redis://[user:password@]host:port[/db] for replicas;
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
  'strict-sessions': { type: 'boolean' },
  'log-format': { type: 'string' },
  'drain-ms': { type: 'string' },
  metrics: { type: 'boolean' },
  reload: { type: 'boolean' },
  'allow-host': { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

export const COMMANDS = [
  'watch',
  'status',
  'tools',
  'call',
  'logout',
  'diagram',
  'inspect',
  'doctor',
  'serve',
] as const;
export type Command = (typeof COMMANDS)[number];
export type Values = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; tokens: true; allowPositionals: true }>
>['values'];

export interface Parsed {
  command: Command;
  words: string[];
  values: Values;
  /** Arguments after `--`: the --command server's. */
  trailing: string[];
}

export function parse(argv: string[]): Parsed {
  let result;
  try {
    result = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError(describeError(error));
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

export function number(
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
