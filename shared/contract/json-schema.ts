/**
 * JSON Schema (2020-12, the dialect of OpenAPI 3.1) for the wire types, kept beside them so
 * that a field added to an interface without its schema fails to compile (ObjectSchema).
 * GET /api/openapi.json is built from these and the route table (shared/http/openapi.ts).
 */
import { ID_PATTERN, MAX_ADDRESS_LENGTH, MAX_ID_LENGTH } from "./input-rules.js";

export type JsonSchema = { readonly [keyword: string]: unknown };

/**
 * An object schema whose properties are exactly the keys of T (a missing or extra one is a
 * compile error), required as T requires them. `additionalProperties` is left out on
 * purpose: an answer is checked with `unevaluatedProperties: false` where it is used, so
 * that an error body can be the error plus the view (allOf) and still admit nothing else.
 */
export type ObjectSchema<T> = {
  readonly type: "object";
  readonly description?: string;
  readonly properties: { readonly [K in keyof Required<T>]: JsonSchema };
  readonly required: readonly (keyof T & string)[];
  /** Set on schemas that are only ever nested, never combined. */
  readonly additionalProperties?: false;
};

/** A reference to a schema of the document's components (see shared/contract/schemas.ts). */
export function ref(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

export const ID_SCHEMA: JsonSchema = {
  type: "string",
  pattern: ID_PATTERN.source,
  maxLength: MAX_ID_LENGTH,
  not: { enum: [".", ".."] },
  description: "1–128 characters of A–Z, a–z, 0–9, '.', '_', ':' or '-' (not '.' or '..').",
};

export const ADDRESS_SCHEMA: JsonSchema = {
  type: ["string", "null"],
  maxLength: MAX_ADDRESS_LENGTH,
  description: "Where the holder can be reached (free text, at most 512 characters), or null.",
};

/** A heartbeat's `address`, for a lease or a member alike. */
export const ADDRESS_UPDATE_SCHEMA: JsonSchema = { ...ADDRESS_SCHEMA, description: "A string sets it, null clears it, omitted keeps the stored one." };

export const DATE_TIME_SCHEMA: JsonSchema = { type: "string", format: "date-time", description: "ISO-8601 UTC." };

export const COUNT_SCHEMA: JsonSchema = { type: "integer", minimum: 0 };

export const DURATION_MS_SCHEMA: JsonSchema = { type: "integer", minimum: 0, description: "Milliseconds." };

/**
 * The body of a heartbeat, for a lease or a member alike: the caller's id (required, the
 * schema of ID_SCHEMA), its `address` (ADDRESS_UPDATE_SCHEMA), then what the body adds (the
 * token of the caller's last accepted heartbeat, and any field of its own). Unknown fields
 * are refused.
 */
export function heartbeatBodySchema<Id extends string, More extends Readonly<Record<string, JsonSchema>>>(id: Id, more: More): ObjectSchema<HeartbeatBodyShape<Id, More>> {
  const properties = { [id]: ID_SCHEMA, address: ADDRESS_UPDATE_SCHEMA, ...more };
  return { type: "object", properties: properties as ObjectSchema<HeartbeatBodyShape<Id, More>>["properties"], required: [id], additionalProperties: false };
}

/** What heartbeatBodySchema describes: the id, `address`, and the added fields (optional). */
type HeartbeatBodyShape<Id extends string, More> = { readonly [K in Id]: string } & { readonly address?: string | null } & { readonly [K in keyof More]?: unknown };
