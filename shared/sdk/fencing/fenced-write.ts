/**
 * The read-check-write every fenced writer runs (docs/fencing.md): read the resource and its
 * epoch mark with its ETag, refuse if the mark is above the caller's epoch, then write the
 * data and the caller's epoch conditionally — If-Match the ETag read, or create-only when
 * there was nothing — so that a write from anyone in between makes this one fail and start
 * over. No lock is taken; a lost race is retried a bounded number of times.
 */

import { FencedOutError, FencedWriteContendedError } from "./fenced-out-error.js";
import { checkOptionalSignal } from "../loop/option-checks.js";

/** What each fenced write takes. */
export interface FencedWriteOptions {
  /**
   * The fencing token of the term doing the work: the `epoch` of the elector's `elected`
   * event (or `elector.epoch` while primary). A non-negative integer.
   */
  readonly epoch: number;
  /** Aborts the write between its steps and inside the client's calls (e.g. the `signal` of `elected`). */
  readonly signal?: AbortSignal;
}

/** What a fenced write passes to each call of the caller's client: the write's own signal. */
export interface FenceableCallOptions {
  /** The write's `signal`, if it was given one. */
  abortSignal?: AbortSignal;
}

/** What each fenced writer takes when it is made. */
export interface FencedWriterOptions {
  /** Read-check-write rounds before a write that keeps losing ETag races gives up (default 10). */
  readonly maxAttempts?: number;
  /**
   * The property (Table), field (Cosmos) or metadata key (blob) that keeps the resource's epoch
   * mark, stored with the data. Default `haEpoch` (`haepoch` for blobs, whose metadata keys are
   * case-insensitive). Letters, digits and `_`, starting with a letter or `_`.
   */
  readonly epochField?: string;
}

/** What a fenced write that succeeded did. */
export interface FencedWriteResult {
  /** True when this write created the resource. */
  readonly created: boolean;
  /** The epoch mark before this write; undefined when the resource was created or had no mark. */
  readonly previousEpoch: number | undefined;
  /** The resource's ETag after this write, when the store returned it. */
  readonly etag: string | undefined;
  /** Read-check-write rounds it took (1 unless a concurrent write won an ETag race). */
  readonly attempts: number;
}

/** The resource as read: its mark (undefined when it has none) and the ETag to write against. */
export interface FencedSnapshot {
  readonly epoch: number | undefined;
  readonly etag: string;
}

/** One store's side of the write: the adapters for tables, blobs and Cosmos items. */
export interface FenceTarget {
  /** For messages and errors: which resource. */
  readonly resource: string;
  /** undefined when the resource does not exist. */
  read(signal: AbortSignal | undefined): Promise<FencedSnapshot | undefined>;
  /**
   * Writes the data with the caller's epoch as the mark: create-only when `etag` is undefined,
   * else If-Match `etag`. Returns LOST_RACE when the condition failed (the resource changed,
   * appeared or vanished since it was read), else the new ETag.
   */
  write(etag: string | undefined, signal: AbortSignal | undefined): Promise<{ readonly etag: string | undefined } | typeof LOST_RACE>;
}

export const LOST_RACE = Symbol("lost the ETag race");

export const DEFAULT_EPOCH_FIELD = "haEpoch";
const DEFAULT_MAX_ATTEMPTS = 10;
const FIELD_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean" || value === null || value === undefined) return String(value);
  return Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

/** The epoch a write carries, checked where it enters. */
export function checkEpoch(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    const hint = value === undefined ? " (an elector's `epoch` is undefined while it is not primary: do not write then)" : "";
    throw new TypeError(`Expected \`${name}\` to be a non-negative integer, the epoch of the term doing the write, got ${describe(value)}${hint}.`);
  }
  return value;
}

export interface CheckedWriterOptions {
  readonly maxAttempts: number;
  readonly epochField: string;
}

export function checkWriterOptions(options: FencedWriterOptions | undefined, defaultField: string): CheckedWriterOptions {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw new TypeError(`Expected the fenced writer's options to be an object, got ${describe(options)}.`);
  }
  const maxAttempts = options?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (typeof maxAttempts !== "number" || !Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
    throw new TypeError(`Expected \`maxAttempts\` to be a positive integer, got ${describe(maxAttempts)}.`);
  }
  const epochField = options?.epochField ?? defaultField;
  if (typeof epochField !== "string" || !FIELD_PATTERN.test(epochField)) {
    throw new TypeError(`Expected \`epochField\` to be 1–64 letters, digits or '_', starting with a letter or '_', got ${describe(epochField)}.`);
  }
  return { maxAttempts, epochField };
}

export interface CheckedWrite {
  readonly epoch: number;
  readonly signal: AbortSignal | undefined;
}

export function checkWriteOptions(options: FencedWriteOptions | undefined): CheckedWrite {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`Expected the write's options to be an object with \`epoch\`, e.g. { epoch: elector.epoch }, got ${describe(options)}.`);
  }
  return { epoch: checkEpoch("epoch", options.epoch), signal: checkOptionalSignal("signal", options.signal) };
}

/**
 * A stored mark as a number: a number, a bigint or a decimal string (a Table Int64; blob
 * metadata), or `{ value }` (a Table value read without type conversion). undefined when absent; a
 * mark that is none of these is refused rather than overwritten, since it may hide a newer term.
 */
export function parseStoredEpoch(resource: string, field: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const raw = typeof value === "object" && "value" in value ? (value as { value: unknown }).value : value;
  const parsed = (typeof raw === "string" && /^\d{1,16}$/.test(raw)) || typeof raw === "bigint" ? Number(raw) : raw;
  if (typeof parsed === "number" && Number.isSafeInteger(parsed) && parsed >= 0) return parsed;
  throw new Error(
    `The epoch mark \`${field}\` of ${resource} is ${describe(raw)}, not a non-negative integer, so no fenced write can tell whether a newer term wrote it. ` +
      "Set it to the highest epoch that wrote the resource (or remove it if none did).",
  );
}

/** The HTTP status of an Azure SDK error: `statusCode` (RestError) or a numeric `code` (Cosmos). */
export function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { statusCode, code } = error as { statusCode?: unknown; code?: unknown };
  if (typeof statusCode === "number") return statusCode;
  return typeof code === "number" ? code : undefined;
}

/** A fenced writer's options, checked when it is made, and the run of each of its writes. */
export interface FencedWriter {
  /** The field, property or metadata key that keeps the epoch mark. */
  readonly epochField: string;
  /**
   * Checks the write's options where they enter, has `targetFor` check the rest of the
   * write and describe the store's side of it for the checked epoch, then runs the
   * read-check-write.
   */
  write(options: FencedWriteOptions, targetFor: (epoch: number, signal: AbortSignal | undefined) => FenceTarget | Promise<FenceTarget>): Promise<FencedWriteResult>;
}

/** What every fenced writer (Table entities, blobs, Cosmos items) does around its store's side. */
export function fencedWriter(options: FencedWriterOptions | undefined, defaultField: string): FencedWriter {
  const { maxAttempts, epochField } = checkWriterOptions(options, defaultField);
  return {
    epochField,
    write: async (writeOptions, targetFor) => {
      const { epoch, signal } = checkWriteOptions(writeOptions);
      return writeFenced(await targetFor(epoch, signal), epoch, maxAttempts, signal);
    },
  };
}

/** A read of the resource: undefined when the store answers 404 (it is not there), any other error as it is. */
export async function unlessMissing<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

/**
 * A conditional write (FenceTarget.write): its ETag, or LOST_RACE when it failed with one of
 * the statuses `lostOn` (the resource appeared, changed or vanished since it was read); any
 * other error as it is.
 */
export async function conditionalWrite(write: () => Promise<{ readonly etag?: string }>, lostOn: readonly number[]): Promise<{ readonly etag: string | undefined } | typeof LOST_RACE> {
  try {
    const written = await write();
    return { etag: written.etag };
  } catch (error) {
    if (lostOn.includes(statusOf(error) ?? 0)) return LOST_RACE;
    throw error;
  }
}

/** Runs the read-check-write until it writes, is fenced out, or has lost `maxAttempts` races. */
export async function writeFenced(target: FenceTarget, epoch: number, maxAttempts: number, signal: AbortSignal | undefined): Promise<FencedWriteResult> {
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    signal?.throwIfAborted();
    const current = await target.read(signal);
    if (current?.epoch !== undefined && current.epoch > epoch) throw new FencedOutError(target.resource, epoch, current.epoch);
    signal?.throwIfAborted();
    const written = await target.write(current?.etag, signal);
    if (written !== LOST_RACE) return { created: current === undefined, previousEpoch: current?.epoch, etag: written.etag, attempts: attempt };
  }
  throw new FencedWriteContendedError(target.resource, epoch, maxAttempts);
}
