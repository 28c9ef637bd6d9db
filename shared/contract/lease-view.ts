import { MAX_PRIORITY, MIN_PRIORITY } from "./input-rules.js";
import { ADDRESS_SCHEMA, COUNT_SCHEMA, DATE_TIME_SCHEMA, DURATION_MS_SCHEMA, ID_SCHEMA, ref, type ObjectSchema } from "./json-schema.js";

/** The live primary of a utype, as GET /api/primary/{utype} shows it (docs/api.md). */
export interface PrimaryView {
  /** The holder's uuid, the id it heartbeats with. */
  readonly uuid: string;
  /** Where the holder can be reached, as it registered it, or null. */
  readonly address: string | null;
  /** The fencing token of this term: it grows with every new primary of the role. */
  readonly epoch: number;
  /** ISO-8601 UTC. */
  readonly renewedAt: string;
  /** How long the lease has left, on the service's clock. */
  readonly expiresInMs: number;
  /**
   * Always present. True once the lease was revoked (DELETE without its token): the holder
   * can no longer renew it, and nobody takes over before it expires.
   */
  readonly revoked: boolean;
  /** The holder's priority (docs/protocol.md#priorities-and-preemption); absent: 0. */
  readonly priority?: number;
}

/** One utype's lease: its live primary or null, the role's epoch, and the service's I and T. */
export interface LeaseView {
  /** The role. */
  readonly utype: string;
  /** Its live primary, or null when nobody holds the lease (released, expired, or never held). */
  readonly primary: PrimaryView | null;
  /**
   * The role's current epoch, whether or not anyone holds the lease now: the stored
   * entry's epoch (the last term's, after a release or an expiry), 0 when the role never
   * had a holder. Equal to `primary.epoch` while there is a primary. It is what a new
   * downstream fencing target should be seeded with: the next primary's epoch is higher.
   */
  readonly epoch: number;
  /** I, the heartbeat interval the service is configured with. */
  readonly intervalMs: number;
  /** T, the lease timeout the service is configured with. */
  readonly timeoutMs: number;
  /**
   * Always present: null, or the role's planned handover (docs/protocol.md#planned-handover).
   * A holder whose accepted renewal shows one steps down and releases with its token; a
   * standby that sees one polls fast.
   */
  readonly handover: HandoverView | null;
  /** Only with `?standbys=true`: the standbys seen within T, oldest announcement first. */
  readonly standbys?: readonly StandbyView[];
  /** Only in the list with `?vacant=true`, on a role with no primary: since when it has none (ISO-8601 UTC). */
  readonly vacantSince?: string;
}

/**
 * A planned handover. `pending`: the live holder was asked to step down; its renewals are
 * accepted until `until` (the request + T), refused after. `reserved`: the holder released;
 * only `to` may take over until `until` (the release + T).
 */
export interface HandoverView {
  /** The standby's uuid that should take over, or null for any standby. */
  readonly to: string | null;
  /** ISO-8601 UTC, on the service's clock. */
  readonly requestedAt: string;
  /** `pending` until the holder releases, then `reserved` for `to` (see above). */
  readonly phase: "pending" | "reserved";
  /** ISO-8601 UTC: the end of the phase (see above). */
  readonly until: string;
  /**
   * `preempt`: a standby of higher priority asked for the role after its hold-down
   * (docs/protocol.md#priorities-and-preemption). Absent: an operator's handover.
   */
  readonly reason?: "preempt";
}

/** A participant that asked for a held role and announced itself (docs/protocol.md#standbys). */
export interface StandbyView {
  /** The standby's uuid. */
  readonly uuid: string;
  /** Where the standby can be reached, or null. */
  readonly address: string | null;
  /** ISO-8601 UTC: its last announcement. */
  readonly seenAt: string;
  /** Its priority, as its last announcement stated it (docs/protocol.md#priorities-and-preemption); absent: 0. */
  readonly priority?: number;
}

/** GET /api/primary: name resolving across roles, live primaries only (and vacant roles with `?vacant=true`). */
export interface PrimaryList {
  /** One lease per role, by utype. */
  readonly primaries: readonly LeaseView[];
}

/** GET /api/health: 200 with `ok`, 503 with `unavailable` (and the error object). */
export interface HealthView {
  /** `ok` when the store answered, `unavailable` when it did not. */
  readonly status: "ok" | "unavailable";
  /** The store's kind: "table", "cosmos" or "memory". */
  readonly store: string;
  /** Only when the app's telemetry could not start: the service runs without it (docs/deploy.md#when-it-does-not-start). */
  readonly telemetry?: TelemetryFailure;
}

/** Telemetry that could not start at the app's start: why, and what to change. */
export interface TelemetryFailure {
  /** Always `failed`. */
  readonly status: "failed";
  /** The setting that asked for telemetry: APPLICATIONINSIGHTS_CONNECTION_STRING. */
  readonly setting: string;
  /** What the set-up threw. */
  readonly error: string;
  /** What to change, in words. */
  readonly fix: string;
}

/** A candidate's priority in a view: present only when not 0. */
const PRIORITY_SCHEMA = { type: "integer", minimum: MIN_PRIORITY, maximum: MAX_PRIORITY, not: { const: 0 }, description: "Its priority, higher preferred; absent: 0." };

export const PRIMARY_VIEW_SCHEMA: ObjectSchema<PrimaryView> = {
  type: "object",
  description: "The live primary of a role.",
  properties: {
    uuid: ID_SCHEMA,
    address: ADDRESS_SCHEMA,
    epoch: { type: "integer", minimum: 1, description: "The fencing token of this term." },
    renewedAt: DATE_TIME_SCHEMA,
    expiresInMs: { type: "integer", minimum: 0, description: "How long the lease has left, on the service's clock." },
    revoked: { type: "boolean", description: "Revoked without its token: it can no longer renew and runs out on its own." },
    priority: PRIORITY_SCHEMA,
  },
  required: ["uuid", "address", "epoch", "renewedAt", "expiresInMs", "revoked"],
  additionalProperties: false,
};

export const LEASE_VIEW_SCHEMA: ObjectSchema<LeaseView> = {
  type: "object",
  description: "One role's lease: its live primary or null, the role's epoch, and the service's I and T.",
  properties: {
    utype: ID_SCHEMA,
    primary: { oneOf: [ref("PrimaryView"), { type: "null" }] },
    epoch: { ...COUNT_SCHEMA, description: "The role's current epoch: 0 for a role never held." },
    intervalMs: DURATION_MS_SCHEMA,
    timeoutMs: DURATION_MS_SCHEMA,
    handover: { oneOf: [ref("HandoverView"), { type: "null" }] },
    standbys: { type: "array", items: ref("StandbyView"), description: "Only with `?standbys=true`: the standbys seen within T." },
    vacantSince: { ...DATE_TIME_SCHEMA, description: "Only in the list with `?vacant=true`, on a role with no primary: since when it has none." },
  },
  required: ["utype", "primary", "epoch", "intervalMs", "timeoutMs", "handover"],
};

export const HANDOVER_VIEW_SCHEMA: ObjectSchema<HandoverView> = {
  type: "object",
  description: "A planned handover: pending while the holder is asked to step down, reserved for `to` after its release.",
  properties: {
    to: { oneOf: [ID_SCHEMA, { type: "null" }], description: "The standby's uuid, or null for any." },
    requestedAt: DATE_TIME_SCHEMA,
    phase: { enum: ["pending", "reserved"] },
    until: { ...DATE_TIME_SCHEMA, description: "pending: the holder's renewals are refused after it; reserved: anyone may take over after it." },
    reason: { const: "preempt", description: "A standby of higher priority asked for the role after its hold-down; absent: an operator's handover." },
  },
  required: ["to", "requestedAt", "phase", "until"],
  additionalProperties: false,
};

export const STANDBY_VIEW_SCHEMA: ObjectSchema<StandbyView> = {
  type: "object",
  description: "A participant standing by for the role, seen within T.",
  properties: { uuid: ID_SCHEMA, address: ADDRESS_SCHEMA, seenAt: DATE_TIME_SCHEMA, priority: PRIORITY_SCHEMA },
  required: ["uuid", "address", "seenAt"],
  additionalProperties: false,
};

export const PRIMARY_LIST_SCHEMA: ObjectSchema<PrimaryList> = {
  type: "object",
  properties: { primaries: { type: "array", items: { $ref: "#/components/schemas/LeaseView", unevaluatedProperties: false } } },
  required: ["primaries"],
  additionalProperties: false,
};

export const HEALTH_VIEW_SCHEMA: ObjectSchema<HealthView> = {
  type: "object",
  properties: {
    status: { enum: ["ok", "unavailable"] },
    store: { type: "string", description: '"table", "cosmos" or "memory".' },
    telemetry: ref("TelemetryFailure"),
  },
  required: ["status", "store"],
};

export const TELEMETRY_FAILURE_SCHEMA: ObjectSchema<TelemetryFailure> = {
  type: "object",
  description: "Only when the app's telemetry could not start: the service serves as usual without it.",
  properties: {
    status: { const: "failed" },
    setting: { type: "string", description: "The setting that asked for telemetry." },
    error: { type: "string", description: "Why the set-up failed." },
    fix: { type: "string", description: "What to change." },
  },
  required: ["status", "setting", "error", "fix"],
  additionalProperties: false,
};
