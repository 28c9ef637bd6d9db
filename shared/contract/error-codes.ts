import type { ObjectSchema } from "./json-schema.js";

/**
 * Every error code the service answers, with its HTTP status (docs/api.md#error-codes, leases and membership, and the
 * local host's own refusals). Handlers, both hosts and the SDK read them from here, so a code
 * can only be sent, or recognised, if it is listed.
 */
export const ERROR_STATUS = {
  InvalidRequest: 400,
  Unauthorized: 401,
  /** The caller is authenticated, but no grant of HA_GRANTS lets it do this write; nothing was written. */
  Forbidden: 403,
  /** A write (PUT, DELETE, POST) a browser sent from a page of another origin than the service's; nothing was done. */
  CrossOrigin: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  /** Local host: the request's headers or body did not arrive in time. */
  RequestTimeout: 408,
  LeaseHeld: 409,
  LeaseRevoked: 409,
  /** Membership: another session of the member is joining or active, or the caller's session is not the row's. */
  SessionHeld: 409,
  /** Membership: the caller's session said goodbye, went leaving or was removed; rejoin with a new session. */
  SessionEnded: 409,
  Conflict: 409,
  /** Handover: nobody live and unrevoked holds the role, so nobody can hand it over. */
  NoPrimary: 409,
  /** Handover: `to` names no standby of the role seen within T. */
  NoSuchStandby: 409,
  PayloadTooLarge: 413,
  /** The body has a content or transfer coding the service does not decode. */
  UnsupportedMediaType: 415,
  /** Local host: the request line and headers are over the parser's limit (16 KiB). */
  HeadersTooLarge: 431,
  /** Local host: a bug; the last resort, logged, never with a stack. */
  InternalError: 500,
  StoreUnavailable: 503,
  /** Load shedding: too many requests wait for the store; nothing was done. Sent with Retry-After (seconds). */
  Overloaded: 503,
  /** Azure: a setting of the app is missing or wrong; the message names it and says what to change. Nothing was done. */
  Misconfigured: 503,
  /** The tenant's signing keys could not be fetched to check a bearer token; nothing was done. */
  IdentityUnavailable: 503,
} as const;

/** One of the error codes the service answers with (`error.code` of an error body), each listed with its HTTP status in ERROR_STATUS. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The body of every error answer: `{"error": {"code", "message"}}`, sometimes with more fields. */
export interface ErrorBody {
  readonly error: { readonly code: ErrorCode; readonly message: string };
}

/** Every code answered with `status`: a code added to ERROR_STATUS (Overloaded, 503) is in the document at once. */
export function codesWithStatus(status: number): ErrorCode[] {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);
}

/** The error body whose code is one of `codes`. */
export function errorBodySchema(codes: readonly ErrorCode[]): ObjectSchema<ErrorBody> {
  return {
    type: "object",
    properties: {
      error: {
        type: "object",
        properties: { code: { enum: codes }, message: { type: "string", description: "What went wrong and what to change, for people." } },
        required: ["code", "message"],
        additionalProperties: false,
      },
    },
    required: ["error"],
  };
}
