/** What the scripted server and network answer with: socket errors, a 401, the initialize result. */
import { AuthorizationRequiredError } from '../../../src/core/errors.js';
import { LATEST_PROTOCOL_VERSION } from '../../../src/protocol/messages.js';

/** A socket error as undici reports it: the code on the cause. */
export function socketError(code: string): Error {
  return Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });
}

export function unauthorized(generation: number): AuthorizationRequiredError {
  return new AuthorizationRequiredError(
    'HTTP 401: authorization required',
    { status: 401, wwwAuthenticate: 'Bearer', resourceUrl: new URL('http://127.0.0.1:9/mcp') },
    generation,
  );
}

export const INITIALIZE_RESULT = {
  protocolVersion: LATEST_PROTOCOL_VERSION,
  capabilities: { tools: {} },
  serverInfo: { name: 'scripted', version: '1.0.0' },
};
