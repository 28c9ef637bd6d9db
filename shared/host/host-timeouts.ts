/** The deadlines a client gets to send one request to the local host. */
export interface LocalHostTimeouts {
  /** From the request's first byte to the end of its headers; default 5000 ms. Then 408. */
  readonly headersTimeoutMs?: number;
  /** From the end of the headers to the end of the body; default 5000 ms. Then 408. */
  readonly bodyTimeoutMs?: number;
}

export interface HostTimeouts {
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  /**
   * Node's own bound on a whole request (server.requestTimeout). It backs up the body
   * deadline, which the host enforces itself so that it can answer with a JSON 408, and
   * it bounds how long an already-answered body is still read and dropped.
   */
  readonly requestTimeoutMs: number;
  /** How often Node checks the two server timeouts; a fraction of the shortest. */
  readonly checkIntervalMs: number;
}

export const DEFAULT_HEADERS_TIMEOUT_MS = 5_000;
export const DEFAULT_BODY_TIMEOUT_MS = 5_000;
const MAX_TIMEOUT_MS = 600_000;

/** Validates the options where they enter, with a message that says what to change. */
export function resolveHostTimeouts(given: LocalHostTimeouts = {}): HostTimeouts {
  const headersTimeoutMs = checkTimeout("headersTimeoutMs", given.headersTimeoutMs, DEFAULT_HEADERS_TIMEOUT_MS);
  const bodyTimeoutMs = checkTimeout("bodyTimeoutMs", given.bodyTimeoutMs, DEFAULT_BODY_TIMEOUT_MS);
  return {
    headersTimeoutMs,
    bodyTimeoutMs,
    // Past both deadlines, with a second for the host's own body timer to answer first.
    requestTimeoutMs: headersTimeoutMs + bodyTimeoutMs + 1_000,
    checkIntervalMs: Math.max(10, Math.min(1_000, Math.round(Math.min(headersTimeoutMs, bodyTimeoutMs) / 4))),
  };
}

function checkTimeout(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_TIMEOUT_MS) {
    throw new RangeError(
      `Expected local host option \`${name}\` to be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS} (got ${String(value)}); omit it for the default.`,
    );
  }
  return value;
}
