/**
 * Server configuration: zod schemas, defaults, and the `mcpServers` JSON format used by Claude
 * Desktop, Cursor and VS Code. Errors name the server and the field.
 */
import type { BackoffPolicy, RestartPolicy } from '../../machines/restart-policy.js';
import { z } from 'zod';
import { issueMessage, leafIssues } from '../core/zod-issues.js';
import { mcpRemoteAdvice, mcpRemoteTarget } from './mcp-remote.js';
import type { SecretSources } from '../core/redact.js';
import { PIN_VALUES, pinOf } from '../protocol/era.js';
import { ConfigError } from '../core/errors.js';
import { isAuthProvider, type AuthConfig } from '../auth/resolve-provider.js';
import { parseOAuthOptions } from '../auth/options.js';
import { closest } from '../core/did-you-mean.js';
import { LOADER_FIELDS, unknownFields, warningsReported } from './fields.js';
import { interpolatedSecretsOf, principalVariable, unexpandedVariable } from './interpolate.js';
import { withHostUrl } from './host-urls.js';
import { emitConfigWarning, type ConfigWarning, type ParseOptions } from './config-warning.js';
import { isObject } from '../core/is-object.js';

export { emitConfigWarning, formatConfigWarning, type ConfigWarning, type ParseOptions } from './config-warning.js';

const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** A day: a server changes era when it is upgraded, which is rare; a wrong verdict costs one probe. */
const DEFAULT_ERA_VERDICT_MAX_AGE_MS = 86_400_000;
const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_QUEUED_REQUESTS = 1_000;
/** As many as an origin's message pool has connections (transports/pool.ts): more would queue in undici, unseen. */
const DEFAULT_MAX_IN_FLIGHT = 128;
const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

/** A token bucket: `perSecond` requests a second on average, up to `burst` at once (default: one second's worth). */
const RateLimitSchema = z
  .strictObject({
    perSecond: z.number().positive().max(1_000_000),
    burst: z.number().int().positive().optional(),
  })
  .transform(({ perSecond, burst }) => ({ perSecond, burst: burst ?? Math.max(1, Math.ceil(perSecond)) }));

const BackoffSchema = z.strictObject({
  initialMs: z.number().int().positive().default(500),
  maxMs: z.number().int().positive().default(30_000),
  factor: z.number().min(1).default(2),
  /** Fraction of the delay drawn at random, 0..1 (0.2 = ±20 %). */
  jitter: z.number().min(0).max(1).default(0.2),
});

const RestartSchema = z.strictObject({
  /** Restarts allowed within `withinMs` before the server is declared failed. */
  maxRestarts: z.number().int().nonnegative().default(20),
  withinMs: z.number().int().positive().default(600_000),
  /** How long a session must stay ready before the restart budget resets. */
  provenAfterMs: z.number().int().nonnegative().default(10_000),
  backoff: BackoffSchema.default(BackoffSchema.parse({})),
  /** While requests wait for the server, its reconnect delay is capped at this (default 1000 ms; idle servers keep the backoff). */
  waitingReconnectMs: z.number().int().nonnegative().optional(),
});

const KeepaliveSchema = z.union([
  z.literal(false),
  z.strictObject({
    intervalMs: z.number().int().positive().default(30_000),
    timeoutMs: z.number().int().positive().default(10_000),
    maxMissed: z.number().int().positive().default(3),
    /** What proves a server alive between probes: any answer from its origin (one probe per origin per interval), or only its own. */
    proof: z.enum(['origin', 'server']).default('origin'),
  }),
]);

/** After the restart budget is spent: try again every initialMs·2^n, capped at maxMs; `false` stays failed. */
const ReviveSchema = z.union([
  z.literal(false),
  z.strictObject({
    initialMs: z.number().int().positive().default(1_000),
    maxMs: z.number().int().positive().max(3_600_000).default(30_000),
  }),
]);

const TRANSPORT_ALIASES: Record<string, 'auto' | 'http' | 'sse' | 'stdio'> = {
  auto: 'auto',
  http: 'http',
  'streamable-http': 'http',
  streamableHttp: 'http',
  streamable_http: 'http',
  sse: 'sse',
  stdio: 'stdio',
};

const TransportTypeSchema = z
  .string()
  .refine((value) => value in TRANSPORT_ALIASES, {
    message: `must be one of ${Object.keys(TRANSPORT_ALIASES).join(', ')}`,
  })
  .transform((value) => TRANSPORT_ALIASES[value]!);

const common = {
  headers: z.record(z.string(), z.string()).default({}),
  requestTimeoutMs: z.number().int().positive().default(DEFAULT_REQUEST_TIMEOUT_MS),
  maxMessageBytes: z.number().int().positive().default(DEFAULT_MAX_MESSAGE_BYTES),
  maxQueuedRequests: z.number().int().positive().default(DEFAULT_MAX_QUEUED_REQUESTS),
  /** Requests sent and not yet answered, at most; more wait in order (counted by `maxQueuedRequests`). */
  maxInFlight: z.number().int().positive().default(DEFAULT_MAX_IN_FLIGHT),
  /** At most `perSecond` requests a second to this server, `burst` at once; none by default. */
  rateLimit: RateLimitSchema.optional(),
  /** The longest wait a 429/503 `Retry-After` is honoured for (a longer one is cut to it), and the backoff's cap without one. */
  maxRetryAfterMs: z.number().int().nonnegative().default(DEFAULT_MAX_RETRY_AFTER_MS),
  keepalive: KeepaliveSchema.default(KeepaliveSchema.parse({})),
  restart: RestartSchema.default(RestartSchema.parse({})),
  revive: ReviveSchema.default(ReviveSchema.parse({})),
  /** Requests in a row that time out with nothing answered before the connection is probed (0: never). */
  probeAfterTimeouts: z.number().int().nonnegative().default(3),
  /** Check a tool's `structuredContent` against its declared `outputSchema` (`false`: trust the server). */
  validateToolOutput: z.boolean().default(true),
  /** Loaded but not started (Claude Code, Cline, Roo Code); `sup.enable(name)` starts it. */
  disabled: z.boolean().default(false),
  /** `auto` (probe, then fall back), an era (`legacy`, `modern`) or one version (docs/protocol-eras.md). */
  protocolVersion: z
    .string()
    .refine((value) => PIN_VALUES.includes(value), { message: `must be one of ${PIN_VALUES.join(', ')}` })
    .default('auto'),
  /** How long an era verdict in the supervisor's store is trusted (0: always probe; docs/fleets.md). */
  eraVerdictMaxAgeMs: z.number().int().nonnegative().default(DEFAULT_ERA_VERDICT_MAX_AGE_MS),
  /** 2025-era HTTP: keep the session in the supervisor's store, resume it on start (docs/fleets.md). */
  resumeSession: z.boolean().default(false),
  /** One connection per principal (`sup.as(principal)`), not one shared by all (docs/principals.md). */
  perPrincipal: z.boolean().default(false),
};

/** An AuthProvider, or OAuth client options (checked in detail when the provider is built). */
const AuthSchema = z.custom<AuthConfig>(isObject, {
  error: 'must be OAuth client options (an object) or an AuthProvider',
});

const UrlServerSchema = z.looseObject({
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  type: TransportTypeSchema.optional(),
  /** OAuth 2.1 authorization for this server (HTTP and legacy SSE only). */
  auth: AuthSchema.optional(),
  ...common,
});

/** stdio shutdown: close stdin, wait, SIGTERM the process group, wait, SIGKILL it. */
const ShutdownSchema = z.strictObject({
  closeStdinTimeoutMs: z.number().int().nonnegative().default(2_000),
  sigtermTimeoutMs: z.number().int().nonnegative().default(2_000),
});

/** Where a stdio server's stderr lines go besides the tail kept for status() and errors. */
export type StderrListener = (line: string, server: string) => void;
export type StderrForward = false | 'inherit' | StderrListener;

const StderrSchema = z.strictObject({
  /** Recent stderr lines kept for status().stderrTail and for the error when the process dies. */
  tailLines: z.number().int().nonnegative().max(1_000).default(50),
  /** `false`: keep only the tail; `'inherit'`: also write `[name] line` to this process's stderr; a function: called per line. */
  forward: z
    .custom<StderrForward>((value) => value === false || value === 'inherit' || typeof value === 'function', {
      error: "must be false, 'inherit' or a function (line, server) => void",
    })
    .default(false),
});

const CommandServerSchema = z.looseObject({
  command: z.string().min(1, 'must not be empty'),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  type: TransportTypeSchema.optional(),
  shutdown: ShutdownSchema.default(ShutdownSchema.parse({})),
  stderr: StderrSchema.default(StderrSchema.parse({})),
  ...common,
});

/** Every key a server entry may have: the schemas' own, and what the loader reads before them. */
const KNOWN_FIELDS: readonly string[] = [
  ...new Set([...Object.keys(UrlServerSchema.shape), ...Object.keys(CommandServerSchema.shape), ...LOADER_FIELDS]),
];

export type ServerConfigInput = z.input<typeof UrlServerSchema> | z.input<typeof CommandServerSchema>;
/** Declared once, by the supervisor machine's restart policy; the schema must produce exactly it. */
export type { BackoffPolicy, RestartPolicy };
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const restartSchemaIsThePolicy: Exactly<z.output<typeof RestartSchema>, RestartPolicy> = true;
const backoffSchemaIsThePolicy: Exactly<z.output<typeof BackoffSchema>, BackoffPolicy> = true;
void restartSchemaIsThePolicy;
void backoffSchemaIsThePolicy;
export type KeepaliveConfig = z.output<typeof KeepaliveSchema>;
export type StdioShutdownConfig = z.output<typeof ShutdownSchema>;
export type StdioStderrConfig = z.output<typeof StderrSchema>;
export type RateLimitConfig = z.output<typeof RateLimitSchema>;

/** The fields every server has, read from the schema: each present on a parsed config (possibly undefined). */
type CommonFields = z.output<z.ZodObject<typeof common>>;
type Present<T> = { [K in keyof Required<T>]: T[K] };
const COMMON_FIELDS = Object.keys(common) as (keyof typeof common)[];

interface CommonResolved extends Present<CommonFields> {
  name: string;
  /** Values that came from `${VAR}`, `${env:VAR}`, `${input:id}` or `envFile`: redacted wherever they appear. */
  secrets: readonly string[];
  /** Set on one principal's connection only (supervisor/principals.ts): the principal's label for telemetry. */
  principal?: string | undefined;
}
export interface UrlServerConfig extends CommonResolved {
  kind: 'url';
  url: URL;
  type: 'auto' | 'http' | 'sse';
  auth: AuthConfig | undefined;
}
export interface CommandServerConfig extends CommonResolved {
  kind: 'command';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  type: 'stdio';
  shutdown: StdioShutdownConfig;
  stderr: StdioStderrConfig;
}
export type ServerConfig = UrlServerConfig | CommandServerConfig;

function formatPath(prefix: string, path: readonly PropertyKey[]): string {
  return [prefix, ...path.map(String)].filter(Boolean).join('.');
}

function toConfigError(prefix: string, error: z.ZodError, schema: z.core.$ZodType): ConfigError {
  const issues = leafIssues(error.issues).map((issue) => ({
    path: formatPath(prefix, issue.path),
    message: issueMessage(schema, issue),
  }));
  const lines = issues.map((i) => `${i.path}: ${i.message}`);
  return new ConfigError(`invalid configuration: ${lines.join('; ')}`, issues);
}

/** Where a server's configuration holds secrets, for the one redaction rule (core/redact.ts). */
export function secretSources(config: ServerConfig): SecretSources {
  return config.kind === 'command'
    ? { headers: config.headers, env: config.env, values: config.secrets }
    : { headers: config.headers, url: config.url, values: config.secrets };
}

/** Stands for the sign-in hand-off while a per-principal server's OAuth options are checked. */
const signInLater = (): Promise<string> => Promise.reject(new Error('replaced for each principal'));

/** `${principal}` needs a connection per principal; a resumed session would be one for all. */
function checkPerPrincipal(
  prefix: string,
  value: { perPrincipal: boolean; resumeSession: boolean; headers: unknown; env?: unknown },
): void {
  const named = principalVariable(value);
  if (named && !value.perPrincipal)
    throw fieldError(`${prefix}.${named}`, '${principal} needs `perPrincipal: true` (a connection per principal)');
  if (value.perPrincipal && value.resumeSession)
    throw fieldError(
      `${prefix}.resumeSession`,
      'a per-principal server cannot resume one stored session for all principals',
    );
}

function fieldError(path: string, message: string): ConfigError {
  return new ConfigError(`invalid configuration: ${path}: ${message}`, [{ path, message }]);
}

/** `url` xor `command`, said exactly; a near-miss key (`comand`) is named as the likely cause. */
function checkKind(prefix: string, entry: Record<string, unknown>): 'url' | 'command' {
  const hasUrl = 'url' in entry && entry.url !== undefined;
  const hasCommand = 'command' in entry && entry.command !== undefined;
  if (hasUrl && hasCommand)
    throw fieldError(
      prefix,
      'has both `url` and `command`: give `url` for an HTTP server or `command` for a stdio server, not both',
    );
  if (hasUrl) return 'url';
  if (hasCommand) return 'command';
  const typos = Object.keys(entry).flatMap((key) => {
    const meant = closest(key, KNOWN_FIELDS);
    return meant === 'url' || meant === 'command' ? [`\`${key}\` looks like a typo of \`${meant}\``] : [];
  });
  throw fieldError(
    prefix,
    `has neither \`url\` (an HTTP server) nor \`command\` (a stdio server)${typos.length ? `; ${typos.join(', ')}` : ''}`,
  );
}

function reportWarnings(prefix: string, entry: Record<string, unknown>, options: ParseOptions): void {
  if (warningsReported(entry)) return;
  const warnings: ConfigWarning[] = unknownFields(entry, KNOWN_FIELDS).map((issue) => ({
    path: `${prefix}.${issue.field}`,
    message: issue.message,
  }));
  const unexpanded = unexpandedVariable(entry);
  if (unexpanded)
    warnings.push({
      path: `${prefix}.${unexpanded.field}`,
      message: `${unexpanded.text} is sent as written: variables are expanded by loadConfig() and fromMcpServersJson(), not by createSupervisor()`,
    });
  // Advice, not a mistake: said in strict mode too, never an error.
  const bridged = mcpRemoteTarget(entry.command, entry.args);
  if (bridged) {
    const { message, fix } = mcpRemoteAdvice(bridged);
    (options.onWarning ?? emitConfigWarning)({ path: `${prefix}.command`, message: `${message}; ${fix}` });
  }
  if (warnings.length === 0) return;
  if (options.strict) {
    const issues = warnings.map((w) => ({ path: w.path, message: w.message }));
    throw new ConfigError(
      `invalid configuration (strict): ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      issues,
    );
  }
  for (const warning of warnings) (options.onWarning ?? emitConfigWarning)(warning);
}

/** `/sse` at the end of the path (trailing slash and query allowed) means legacy HTTP+SSE. */
function looksLikeLegacySse(url: URL): boolean {
  return /\/sse\/?$/.test(url.pathname);
}

/** Validates one server's config; `name` appears in every error as `servers.<name>.<field>`. */
export function parseServerConfig(name: string, input: unknown, options: ParseOptions = {}): ServerConfig {
  if (!name) throw new ConfigError('invalid configuration: server names must be non-empty strings');
  const prefix = `servers.${name}`;
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw fieldError(prefix, 'must be an object with `url` (an HTTP server) or `command` (a stdio server)');
  const entry = withHostUrl(name, input as Record<string, unknown>);
  const kind = checkKind(prefix, entry);
  const schema = kind === 'url' ? UrlServerSchema : CommandServerSchema;
  const parsed = schema.safeParse(entry);
  if (!parsed.success) throw toConfigError(prefix, parsed.error, schema);
  // Warnings only for entries that are otherwise valid: one report, the most useful first.
  reportWarnings(prefix, entry, options);
  const value = parsed.data;
  checkPerPrincipal(prefix, value);
  const shared: CommonResolved = {
    ...(Object.fromEntries(COMMON_FIELDS.map((field) => [field, value[field]])) as Present<CommonFields>),
    name,
    secrets: interpolatedSecretsOf(input),
  };
  if ('url' in value) {
    const url = new URL(value.url as string);
    if (value.type === 'stdio')
      throw new ConfigError(`invalid configuration: servers.${name}.type: 'stdio' needs \`command\`, not \`url\``, [
        { path: `servers.${name}.type`, message: "'stdio' needs `command`" },
      ]);
    const type = value.type ?? (looksLikeLegacySse(url) ? 'sse' : 'auto');
    if (value.resumeSession) checkResumable(prefix, type, value.protocolVersion);
    // OAuth options are checked here, so a config file's mistakes name their field at load time.
    if (value.auth !== undefined && !isAuthProvider(value.auth))
      // A per-principal server's browser step is each principal's sign-in (supervisor/principals.ts).
      parseOAuthOptions(
        value.perPrincipal ? { onRedirect: signInLater, ...value.auth } : value.auth,
        `servers.${name}.auth`,
      );
    return { kind: 'url', url, type, auth: value.auth as AuthConfig | undefined, ...shared };
  }
  if (value.resumeSession)
    throw fieldError(`${prefix}.resumeSession`, 'a stdio server has no session to resume: its process is the session');
  if ('auth' in value && value.auth !== undefined) {
    throw new ConfigError(
      `invalid configuration: servers.${name}.auth: authorization applies to HTTP servers (\`url\`); a stdio server gets its credentials from \`env\``,
      [{ path: `servers.${name}.auth`, message: 'only for `url` servers' }],
    );
  }
  if (value.type && value.type !== 'stdio')
    throw new ConfigError(
      `invalid configuration: servers.${name}.type: '${value.type}' needs \`url\`, not \`command\``,
      [{ path: `servers.${name}.type`, message: `'${value.type}' needs \`url\`` }],
    );
  return {
    kind: 'command',
    command: value.command,
    args: value.args,
    env: value.env,
    cwd: value.cwd,
    type: 'stdio',
    shutdown: value.shutdown,
    stderr: value.stderr,
    ...shared,
  };
}

/** `resumeSession` needs a session that outlives a connection: Streamable HTTP in the 2025 era. */
function checkResumable(prefix: string, type: 'auto' | 'http' | 'sse', protocolVersion: string): void {
  if (type === 'sse')
    throw fieldError(`${prefix}.resumeSession`, 'a legacy SSE session ends with its stream: it cannot be resumed');
  if (pinOf(protocolVersion).era === 'modern')
    throw fieldError(`${prefix}.resumeSession`, `protocolVersion '${protocolVersion}' has no sessions to resume`);
}

export function parseServers(servers: unknown, options: ParseOptions = {}): ServerConfig[] {
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new ConfigError('invalid configuration: servers: must be an object mapping server names to configs', [
      { path: 'servers', message: 'must be an object' },
    ]);
  }
  const entries = Object.entries(servers);
  if (entries.length === 0)
    throw new ConfigError('invalid configuration: servers: at least one server is needed', [
      { path: 'servers', message: 'is empty' },
    ]);
  return entries.map(([name, config]) => parseServerConfig(name, config, options));
}
