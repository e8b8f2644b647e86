/**
 * The task shapes of both eras, checked with zod like every other result (protocol/results.ts),
 * and turned into one `TaskInfo`:
 *
 * - 2025-11-25 (experimental, core): `CreateTaskResult` is `{ task }`; a Task has `ttl` and
 *   `pollInterval`; the outcome comes from `tasks/result`.
 * - 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663): `CreateTaskResult` is the Task itself
 *   with `resultType: 'task'`; `ttlMs`, `pollIntervalMs`; `tasks/get` carries `result`, `error` or
 *   `inputRequests` inline.
 */
import type { Era } from '../../machines/connection.types.js';
import { z } from 'zod';
import { parseResult } from '../protocol/results.js';

export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

/** A task as either era reports it, with the era's field names made one. */
export interface TaskInfo {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string | undefined;
  /** ISO 8601. */
  createdAt: string;
  lastUpdatedAt?: string | undefined;
  /** How long the server keeps the task after its creation; `null`: unlimited. */
  ttlMs: number | null;
  /** How often the server asks to be polled. */
  pollIntervalMs?: number | undefined;
  /** 2026-07-28, `completed`: what the request would have returned. */
  result?: Record<string, unknown> | undefined;
  /** 2026-07-28, `failed`: the JSON-RPC error. */
  error?: { code: number; message: string; data?: unknown } | undefined;
  /** 2026-07-28, `input_required`: the server's requests, by key (answer with `tasks.update`). */
  inputRequests?: Record<string, unknown> | undefined;
}

const common = {
  taskId: z.string(),
  status: z.enum(TASK_STATUSES),
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string().optional(),
};

const LegacyTask = z.looseObject({
  ...common,
  ttl: z.number().nullable().optional(),
  pollInterval: z.number().optional(),
});

const ModernTask = z.looseObject({
  ...common,
  ttlMs: z.number().nullable().optional(),
  pollIntervalMs: z.number().optional(),
  result: z.looseObject({}).optional(),
  error: z.looseObject({ code: z.number(), message: z.string() }).optional(),
  inputRequests: z.looseObject({}).optional(),
});

const LegacyCreateTaskResult = z.looseObject({ task: LegacyTask });
const LegacyListTasksResult = z.looseObject({ tasks: z.array(LegacyTask), nextCursor: z.string().optional() });

/** A tasks/get, tasks/cancel (2025) or notification's task. */
export function parseTask(era: Era, method: string, raw: unknown, server: string): TaskInfo {
  return era === 'legacy'
    ? fromLegacy(parseResult(LegacyTask, method, raw, server))
    : fromModern(parseResult(ModernTask, method, raw, server));
}

/** The answer to a task-augmented `tools/call` (2025-11-25). */
export function parseLegacyCreated(raw: unknown, server: string): TaskInfo {
  return fromLegacy(parseResult(LegacyCreateTaskResult, 'tools/call', raw, server).task);
}

export function parseLegacyList(raw: unknown, server: string): { tasks: TaskInfo[]; nextCursor?: string | undefined } {
  const list = parseResult(LegacyListTasksResult, 'tasks/list', raw, server);
  return { tasks: list.tasks.map(fromLegacy), nextCursor: list.nextCursor };
}

/** 2026-07-28: a result is a task handle when the server says so (`resultType: 'task'`). */
export function isModernCreated(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && (raw as { resultType?: unknown }).resultType === 'task';
}

function fromLegacy(task: z.infer<typeof LegacyTask>): TaskInfo {
  return {
    taskId: task.taskId,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttl ?? null,
    pollIntervalMs: task.pollInterval,
  };
}

function fromModern(task: z.infer<typeof ModernTask>): TaskInfo {
  return {
    taskId: task.taskId,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs ?? null,
    pollIntervalMs: task.pollIntervalMs,
    result: task.result,
    error: task.error,
    inputRequests: task.inputRequests,
  };
}
