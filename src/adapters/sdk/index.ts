/**
 * `mcp-supervisor/sdk`: a supervised connection as the official SDK's `Transport`, for the v1
 * (`@modelcontextprotocol/sdk`) and the v2 (`@modelcontextprotocol/client`) `Client`:
 *
 *   const client = new Client({ name: 'my-agent', version: '1.0.0' });
 *   await client.connect(supervisedTransport({ url: 'http://127.0.0.1:3000/mcp' }));
 *
 * The rest of the application stays as it is; the connection behind it recovers sessions, rides
 * out outages and restarts (docs/migrating-from-sdk.md). Imports nothing of the SDK.
 */
import type { ServerConfigInput } from '../../index.js';
import { SupervisedTransport, type SupervisedTransportOptions } from './supervised-transport.js';

export {
  SupervisedTransport,
  type SupervisedTransportOptions,
  type SupervisedSendOptions,
} from './supervised-transport.js';
export { SUPERVISOR_ERROR, type WireMessage, type WireError, type MessageId } from './wire.js';

/** A transport for `client.connect()`; `config` as for `connect()` (url or command, type, auth, …). One per client. */
export function supervisedTransport(
  config: ServerConfigInput,
  options?: SupervisedTransportOptions,
): SupervisedTransport {
  return new SupervisedTransport(config, options);
}
