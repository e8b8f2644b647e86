/** The store could not be read or written: the runtime goes on as if nothing were stored. */
import { McpSupervisorError, type ErrorDetails } from '../../core/errors.js';

/**
 * A warning (the `warning` event, once per outage), never a request's failure: what the store
 * keeps (era verdicts, catalogs, task references, sessions) is learned again from the server.
 */
export class StoreUnavailableError extends McpSupervisorError {
  readonly code = 'STORE_UNAVAILABLE' as const;
  readonly retryable = true;
  constructor(
    /** The store's name (`memory`, `file /path`, `redis host:port`): never a secret. */
    readonly store: string,
    what: string,
    details?: ErrorDetails,
  ) {
    super(`the store (${store}) could not ${what}; going on without it`, details);
  }
}
