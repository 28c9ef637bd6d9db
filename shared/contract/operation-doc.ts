import type { ErrorCode } from "./error-codes.js";
import type { JsonSchema } from "./json-schema.js";
import type { SchemaName } from "./schemas.js";

/** A path or query parameter: what it is, and its schema (a string by default). */
export interface ParameterDoc {
  readonly description: string;
  readonly schema?: JsonSchema;
  /** Query parameters only: path parameters are always required. */
  readonly required?: boolean;
}

/**
 * The success answer. JSON: a named schema, with the fields the operation adds to it
 * (`lease`, `token`). Anything else (the dashboard's HTML, Prometheus text): its content
 * type (or types: a dashboard asset is CSS or JavaScript), and a schema only if one says
 * something useful.
 */
export type SuccessDoc =
  | {
      readonly description: string;
      readonly json: SchemaName;
      readonly adds?: Readonly<Record<string, JsonSchema>>;
      /** 200 unless told: 202 for a request that is stored and acted on later (a handover). */
      readonly status?: 200 | 202;
    }
  | { readonly description: string; readonly contentType: string | readonly string[]; readonly schema?: JsonSchema };

/**
 * A refusal the operation answers itself, beyond those every operation can answer (see
 * COMMON_ERROR_STATUSES in shared/http/openapi.ts), with the view its body carries beside
 * `error` (a 409 LeaseHeld carries the LeaseView).
 */
export interface ErrorDoc {
  readonly code: ErrorCode;
  readonly with?: SchemaName;
}

/**
 * How one operation of the route table describes itself in GET /api/openapi.json: every
 * row of functions/routes.ts carries one (`doc`), so a route cannot exist undocumented.
 * Path parameters named utype, group and member are described once, centrally; any other
 * (a dashboard asset's name) is described in `path`.
 */
export interface OperationDoc {
  readonly tag: "leases" | "membership" | "operations";
  readonly summary: string;
  readonly description?: string;
  readonly path?: Readonly<Record<string, ParameterDoc>>;
  readonly query?: Readonly<Record<string, ParameterDoc>>;
  /** The JSON request body's schema. */
  readonly body?: SchemaName;
  /** False when the body may be left out (Content-Length 0 stands for `{}`). */
  readonly bodyRequired?: false;
  readonly ok: SuccessDoc;
  readonly errors?: readonly ErrorDoc[];
  /**
   * False for a write whose grants are checked part by part (the participant heartbeat):
   * the request itself is never 403, each refused part carries its own. Every other write
   * may be 403 Forbidden.
   */
  readonly forbidden?: false;
}
