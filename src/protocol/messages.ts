/**
 * MCP messages the runtime itself understands. Only the handshake result is validated with a
 * schema: it decides the session. Tool results stay plain objects for the caller.
 */
import { z } from 'zod';

/** Newest first: initialize offers the first one. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

export function isSupportedProtocolVersion(version: unknown): version is ProtocolVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly unknown[]).includes(version);
}

const ImplementationSchema = z.looseObject({
  name: z.string(),
  version: z.string(),
  title: z.string().optional(),
});
export type Implementation = z.infer<typeof ImplementationSchema>;

export const InitializeResultSchema = z.looseObject({
  protocolVersion: z.string(),
  capabilities: z.looseObject({}),
  serverInfo: ImplementationSchema,
  instructions: z.string().optional(),
});

export interface ClientCapabilities {
  roots?: { listChanged?: boolean };
  sampling?: Record<string, unknown>;
  elicitation?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface Tool {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  [key: string]: unknown;
}

export interface ListToolsResult {
  tools: Tool[];
  nextCursor?: string;
  [key: string]: unknown;
}

export interface CallToolResult {
  content: Array<{ type: string; [key: string]: unknown }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}
