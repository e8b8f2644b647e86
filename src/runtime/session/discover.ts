/**
 * The era probe and the modern "handshake": one `server/discover` (spec 2026-07-28,
 * server/discover and basic/versioning). A DiscoverResult, or a recognized modern error, means a
 * modern server: a -32022 is retried once with a version from its `supported` list (ours again
 * if it lists ours), never answered by falling back. Anything else (a 4xx without a modern error body, -32601)
 * means a legacy server, unless the era is pinned modern; no answer in time or a network failure means nothing.
 */
import { isObject } from '../../core/is-object.js';
import type { DiscoverVerdict, SessionInfo } from '../../../machines/connection.machine.js';
import {
  AuthorizationRequiredError,
  ConnectionClosedError,
  describeError,
  McpError,
  ProtocolError,
  RequestTimeoutError,
  TransportError,
  UnsupportedProtocolVersionError,
} from '../../core/errors.js';
import {
  isModernErrorCode,
  LATEST_MODERN_VERSION,
  META_SERVER_INFO,
  MODERN_PROTOCOL_VERSIONS,
  mutualLegacyVersion,
  mutualModernVersion,
  UNSUPPORTED_PROTOCOL_VERSION,
  type VersionPin,
} from '../../protocol/era.js';
import type { Transport } from '../../transports/transport.js';
import { ServerBusyError } from '../../core/retry-after.js';

export interface DiscoverInput {
  server: string;
  transport: Transport;
  pin: VersionPin;
  /** Sends `server/discover` with the modern envelope of `version` (past the gate) and resolves with its result. */
  send: (version: string) => Promise<unknown>;
}

/** The era is pinned modern and the server answered as a legacy one: a restart cannot change that. */
class NotModernError extends ProtocolError {
  override readonly fatal = true;
}

/** Versions tried at most: ours, then one the server named in a -32022. */
const MAX_ATTEMPTS = 2;

export async function discover(input: DiscoverInput): Promise<DiscoverVerdict> {
  const { server, transport, pin } = input;
  let version = pin.version ?? LATEST_MODERN_VERSION;
  for (let attempt = 1; ; attempt++) {
    transport.beginModern(version);
    let result: unknown;
    try {
      result = await input.send(version);
    } catch (error) {
      if (error instanceof McpError && error.rpcCode === UNSUPPORTED_PROTOCOL_VERSION) {
        const supported = (error.data as { supported?: unknown } | undefined)?.supported;
        const next = mutualModernVersion(supported, pin.version);
        // Retried even when `next` is the version just refused: the server lists it (a node behind
        // the same URL not yet upgraded, or a deliberate first refusal), and one retry is bounded.
        if (next !== undefined && attempt < MAX_ATTEMPTS) {
          version = next;
          continue;
        }
        return noMutualVersion(input, supported);
      }
      if (error instanceof McpError && isModernErrorCode(error.rpcCode)) {
        throw new ProtocolError(`the modern server refused 'server/discover': ${error.message}`, {
          server,
          cause: error,
        });
      }
      return legacyOrThrow(input, error);
    }
    return modernVerdict(input, version, result);
  }
}

/** A DiscoverResult: the version to speak is ours if the server lists it, else the newest both speak. */
function modernVerdict(input: DiscoverInput, version: string, result: unknown): DiscoverVerdict {
  const { server, transport, pin } = input;
  const discovered = result as {
    supportedVersions?: unknown;
    capabilities?: unknown;
    instructions?: unknown;
    _meta?: Record<string, unknown>;
  } | null;
  // Not a DiscoverResult: a legacy server that answers any method (it may not check for `initialize` first).
  if (typeof discovered !== 'object' || discovered === null || !Array.isArray(discovered.supportedVersions))
    return legacyOrThrow(
      input,
      new ProtocolError(`the server/discover result has no supportedVersions array: not a modern server`, { server }),
    );
  const chosen = discovered.supportedVersions.includes(version)
    ? version
    : mutualModernVersion(discovered.supportedVersions, pin.version);
  if (chosen === undefined) return noMutualVersion(input, discovered.supportedVersions);
  if (chosen !== version) transport.beginModern(chosen);
  const serverInfo = discovered._meta?.[META_SERVER_INFO];
  const session: SessionInfo = {
    era: 'modern',
    protocolVersion: chosen,
    serverInfo: isImplementation(serverInfo) ? serverInfo : { name: 'unknown', version: 'unknown' },
    capabilities: isObject(discovered.capabilities) ? discovered.capabilities : {},
    instructions: typeof discovered.instructions === 'string' ? discovered.instructions : undefined,
    sessionGeneration: transport.sessionGeneration,
  };
  return { era: 'modern', session };
}

/** A modern server that speaks none of our modern versions: legacy if it still speaks one of those, else fatal. */
function noMutualVersion({ server, pin }: DiscoverInput, supported: unknown): DiscoverVerdict {
  if (pin.era === 'auto' && mutualLegacyVersion(supported) !== undefined)
    return { era: 'legacy', evidence: `the server supports ${String(supported)}, no modern version of ours` };
  const list = Array.isArray(supported) ? supported.map(String) : [];
  throw new UnsupportedProtocolVersionError(pin.version ?? list.join(', '), [...MODERN_PROTOCOL_VERSIONS], {
    server,
  });
}

/**
 * Not a modern answer: a legacy server, unless the failure says nothing about the era
 * (unreachable, no answer in time, 401, 429, 5xx). A server that never answers is not a 2025-era
 * server: it fails the attempt at one request timeout, with no `initialize` tried after it.
 */
function legacyOrThrow({ server, pin }: DiscoverInput, error: unknown): DiscoverVerdict {
  const saysNothing =
    error instanceof AuthorizationRequiredError ||
    error instanceof ConnectionClosedError ||
    error instanceof RequestTimeoutError ||
    error instanceof ServerBusyError ||
    (error instanceof TransportError && (error.status === undefined || error.status >= 500));
  if (saysNothing) throw error;
  const evidence = describeError(error);
  const legacySign = error instanceof McpError || error instanceof ProtocolError || error instanceof TransportError;
  if (!legacySign) throw error;
  if (pin.era === 'modern') {
    const wanted = pin.version ?? 'a modern protocol version';
    throw new NotModernError(`the server does not speak ${wanted} (pinned by protocolVersion): ${evidence}`, {
      server,
      cause: error,
    });
  }
  return { era: 'legacy', evidence };
}

function isImplementation(value: unknown): value is SessionInfo['serverInfo'] {
  return isObject(value) && typeof value.name === 'string' && typeof value.version === 'string';
}
