/** What a supervisor is built from: its servers and the options every server shares. */
import type { InspectionEvent, Observer } from 'xstate';
import type { CatalogOptions } from '../catalog/options.js';
import type { ConfigWarning, ServerConfigInput } from '../config/server-config.js';
import type { Logger } from '../observe/logger.js';
import type { ClientCapabilities, Implementation } from '../protocol/messages.js';
import type { ClientHandlers, ElicitationOptions, SamplingOptions } from '../runtime/server-input/server-requests.js';
import type { Store } from '../store/types.js';
import type { AuthorizationRequiredHook, CredentialResolver, PrincipalOptions } from './principals.js';
import type { ToolCallInterceptor } from '../tools/interceptors.js';
import type { TransportFactory } from '../transports/factory/create-transport.js';
import type { Timers } from '../transports/transport.js';

export interface SupervisorOptions {
  servers: Record<string, ServerConfigInput>;
  clientInfo?: Implementation;
  /** Server-to-client requests: elicitation (form, URL), sampling, roots. Only these are advertised. */
  handlers?: ClientHandlers;
  /** `{ applyDefaults: true }` fills accepted elicitation forms with the schema's defaults (SEP-1034). */
  elicitation?: ElicitationOptions;
  /** `{ tools: true }`: the sampling handler takes tools (advertises `sampling.tools`). */
  sampling?: SamplingOptions;
  /** Client capabilities declared beyond the handlers' (`experimental`, `tasks`, …); validated, a ConfigError names what is wrong. */
  capabilities?: ClientCapabilities;
  /** Extensions the client supports (`{ 'com.example/ext': {} }`), merged into `capabilities.extensions`. */
  extensions?: Record<string, Record<string, unknown>>;
  /** Modern era: retries of one request that keeps asking for input (multi round-trip requests) before it fails; default 10. */
  maxInputRounds?: number;
  /** An XState inspection observer (e.g. from @statelyai/inspect); sees every actor, through sanitized copies of the events. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** A pino-compatible logger for transitions, restarts, fallbacks and stream warnings; silent by default. */
  logger?: Logger;
  /** Jitter source for restart backoff (tests pass a fixed one). */
  random?: () => number;
  /** Timers for stream reconnect delays (tests pass a simulated clock). */
  timers?: Timers;
  /** @internal Not part of the API: builds every transport in place of the real ones (test/model/runtime scripts them). */
  createTransport?: TransportFactory;
  /** The tool catalog's naming and per-server filters (docs/agents.md). */
  catalog?: CatalogOptions;
  /** Unknown fields in a server entry are errors, not warnings (default false). */
  strict?: boolean;
  /** Where config warnings go (default: the logger's `warn` when one is given, else `process.emitWarning`). */
  onWarning?: (warning: ConfigWarning) => void;
  /** A loaded config's warnings (`createSupervisor(await loadConfig(file))`): they go where `onWarning` says. */
  warnings?: readonly ConfigWarning[];
  /**
   * Where what outlives this process is kept and shared with the other processes given the same
   * store (docs/fleets.md): `memoryStore()`, `fileStore(path)`, `redisStore(…)`. None: nothing is
   * shared and nothing outlives the process.
   */
  store?: Store;
  /**
   * Run around every tool call of every server, the first outermost (docs/interceptors.md): they
   * may approve or deny, rewrite the arguments, answer from a cache, and see each outcome.
   */
  interceptors?: readonly ToolCallInterceptor[];
  /** How principals appear in status, logs and telemetry (docs/principals.md). */
  principals?: PrincipalOptions;
  /**
   * Credentials of one principal for one server (a `perPrincipal` one): called once per
   * connection, before it opens; its headers (or a stdio server's env) go over the configured ones.
   */
  credentials?: CredentialResolver;
  /**
   * A principal must sign in to a per-principal OAuth server: send `url` to that person. Their
   * waiting calls fail with AuthorizationRequiredError (`authorizationUrl`); the redirect the host
   * receives completes it: `sup.as(principal).completeAuthorization(server, callbackUrl)`.
   */
  onAuthorizationRequired?: AuthorizationRequiredHook;
}
