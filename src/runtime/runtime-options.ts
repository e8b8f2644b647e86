/** What a server's runtime is built from (the supervisor passes one per configured server). */
import type { ServerConfig } from '../config/server-config.js';
import type { ClientCapabilities, Implementation } from '../protocol/messages.js';
import type { TransportFactory } from '../transports/factory/create-transport.js';
import type { Timers } from '../transports/transport.js';
import type { Store } from '../store/types.js';
import type { ClientHandlers, ElicitationOptions, SamplingOptions } from './server-input/server-requests.js';

export interface RuntimeOptions {
  config: ServerConfig;
  clientInfo: Implementation;
  handlers?: ClientHandlers | undefined;
  elicitation?: ElicitationOptions | undefined;
  sampling?: SamplingOptions | undefined;
  /** Declared on top of what the handlers declare (validated by client-capabilities.ts). */
  capabilities?: ClientCapabilities | undefined;
  /** Retries of one multi round-trip request before it fails (default 10). */
  maxInputRounds?: number | undefined;
  timers?: Timers | undefined;
  /** Internal test hook (see SupervisorOptions.createTransport). */
  createTransport?: TransportFactory | undefined;
  /** The supervisor's store (SupervisorOptions.store); read when a connection opens, never per request. */
  store?: Store | undefined;
}
