import { randomUUID } from "node:crypto";
import type { ElectorMembershipOptions } from "./elector-membership.js";
import { checkOptionalMeter, type ElectorMeter } from "./elector-meter.js";
import type { LeaseTransport } from "../transport/lease-transport.js";
import { LoopSetup, type LoopOptions } from "../loop/loop-setup.js";
import type { TransportKind } from "../loop/transport-kind.js";
import { checkId, checkOptionalAddress, checkOptionalFunction, checkOptionsObject } from "../loop/option-checks.js";
import { isPriority, PRIORITY_RULE } from "../../contract/input-rules.js";

/**
 * What a PrimaryElector takes: the role, where this participant is, and how it reaches the service
 * (LoopOptions). Every option is in docs/configuration.md#the-sdk.
 */
export interface PrimaryElectorOptions extends LoopOptions<LeaseTransport> {
  /** The role to compete for. */
  readonly utype: string;
  /** Where this participant can be reached; GetPrimary shows it to everyone. */
  readonly address?: string;
  /** Compete only while this other utype's primary is at our `address` (co-located services). */
  readonly affinity?: string;
  /** A new incarnation id; defaults to crypto.randomUUID. */
  readonly newUuid?: () => string;
  /** Uniform draws in [0, 1) that spread the standby polls (see POLL_JITTER); defaults to Math.random. */
  readonly random?: () => number;
  /**
   * Also be a member of a group (the utype by default) and watch it: `elector.membership`
   * then gives the leader and the members from this one object.
   */
  readonly membership?: ElectorMembershipOptions;
  /**
   * An OpenTelemetry Meter (`metrics.getMeter("my-app")`): stats() is then also exported as
   * metrics, from start() until stop() ends, labelled `ha.role` = utype (see elector-meter.ts
   * and docs/operations.md). None by default.
   */
  readonly meter?: ElectorMeter;
  /**
   * Announce this participant as a standby while another holds the role (docs/protocol.md#standbys):
   * about every T/2 one poll is a heartbeat with `announce` instead of a GetPrimary, so that
   * operators see it (and can name it in a handover). Default true.
   */
  readonly announce?: boolean;
  /**
   * Ride-through, for work fenced by the epoch (docs/protocol.md#ride-through): through no
   * answer, timeouts and 5xx — never a refusal, a revoke or a handover — stay primary up to
   * this many milliseconds past the lease's deadline, the epoch unchanged; the first answered
   * renewal then either continues the term (accepted) or ends it at once. The guarantee
   * changes: two participants may both believe they are primary while one of them is cut off,
   * so every write of the work must be fenced by `epoch` (fencedTableEntity, fencedBlob,
   * fencedCosmosItem, or the SQL form of docs/fencing.md). Default 0: off.
   */
  readonly rideThroughMs?: number;
  /**
   * This candidate's priority for the role (docs/protocol.md#priorities-and-preemption): an
   * integer from -1000000 to 1000000, higher preferred. A free role goes to the highest
   * standby, and a standby of higher priority than the holder takes the role over after
   * `preemptAfterMs`. Default 0: every candidate equal, as without priorities.
   */
  readonly priority?: number;
  /**
   * The hold-down before preempting (docs/protocol.md#priorities-and-preemption): once this
   * standby has stood by continuously this long (no failed call, the same uuid) while a holder
   * of lower priority holds the role, it asks for the role by a planned handover. `"off"` or
   * null: never preempt (a failover still goes to the highest). Default 30000 ms.
   */
  readonly preemptAfterMs?: number | "off" | null;
}

/** The options, checked, with every default filled in. */
export interface ElectorSettings {
  readonly utype: string;
  readonly address: string | undefined;
  readonly affinity: string | undefined;
  /** The transport, retryDelayInMs, abortSignal and clock, as every SDK loop takes them. */
  readonly setup: LoopSetup<LeaseTransport>;
  readonly announce: boolean;
  readonly newUuid: () => string;
  readonly random: () => number;
  readonly meter: ElectorMeter | undefined;
  readonly rideThroughMs: number;
  /** 0 unless given. */
  readonly priority: number;
  /** The hold-down in ms, or undefined: never preempt. */
  readonly preemptAfterMs: number | undefined;
}

/** The default hold-down before a standby of higher priority preempts the holder. */
export const DEFAULT_PREEMPT_AFTER_MS = 30_000;

/** The longest ride-through: a timer of the platform cannot wait longer (2³¹ − 1 ms, about 24.8 days). */
export const MAX_RIDE_THROUGH_MS = 2_147_483_647;

/** The elector's transport must at least heartbeat; its `endpoint` may come from HA_ENDPOINT (docs/configuration.md). */
const LEASE_TRANSPORT: TransportKind<LeaseTransport> = {
  described: "LeaseTransport (getPrimary, heartbeat, release)",
  accepts: (value): value is LeaseTransport => typeof (value as Partial<LeaseTransport> | null | undefined)?.heartbeat === "function",
  endpointFromEnvironment: true,
};

/** Checks every option where it enters, one rule per `if`, with a message that says what to change. */
export function resolveElectorOptions(options: PrimaryElectorOptions): ElectorSettings {
  checkOptionsObject("the PrimaryElector options", options, '{ utype: "scheduler", endpoint: "http://127.0.0.1:7071/api" }');
  const utype = checkId("utype", options.utype);
  const address = checkOptionalAddress("address", options.address);
  const affinity = options.affinity === undefined ? undefined : checkId("affinity", options.affinity);
  if (affinity !== undefined && address === undefined) {
    throw new TypeError("Expected `address` to be set when `affinity` is: the elector competes only while the affinity utype's primary has this address.");
  }
  if (affinity === utype) {
    throw new TypeError("Expected `affinity` to name another utype than `utype` itself.");
  }
  return {
    utype,
    address,
    affinity,
    setup: new LoopSetup(options, LEASE_TRANSPORT),
    newUuid: checkOptionalFunction("newUuid", options.newUuid) ?? randomUUID,
    random: checkOptionalFunction("random", options.random) ?? Math.random,
    meter: checkOptionalMeter(options.meter),
    announce: checkOptionalBoolean("announce", options.announce) ?? true,
    rideThroughMs: checkRideThroughMs(options.rideThroughMs),
    priority: checkPriority(options.priority),
    preemptAfterMs: checkPreemptAfterMs(options.preemptAfterMs),
  };
}

/** 0 by default; an integer of the contract's range otherwise. */
function checkPriority(value: unknown): number {
  if (value === undefined) return 0;
  if (!isPriority(value)) {
    throw new TypeError(`Expected \`priority\` to be ${PRIORITY_RULE}, this candidate's preference for the role, got ${typeof value === "number" ? String(value) : typeof value}.`);
  }
  return value;
}

/** DEFAULT_PREEMPT_AFTER_MS by default; "off" or null: never; else whole milliseconds a timer can wait. */
function checkPreemptAfterMs(value: unknown): number | undefined {
  if (value === undefined) return DEFAULT_PREEMPT_AFTER_MS;
  if (value === "off" || value === null) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > MAX_RIDE_THROUGH_MS) {
    throw new TypeError(
      `Expected \`preemptAfterMs\` to be a whole number of milliseconds up to ${MAX_RIDE_THROUGH_MS} (how long a standby of higher priority stands by before it takes the role over), or "off" to never preempt, got ${typeof value === "number" ? String(value) : JSON.stringify(value) ?? typeof value}.`,
    );
  }
  return value;
}

/** 0 (off, the default) or a whole number of milliseconds a timer can wait. */
function checkRideThroughMs(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > MAX_RIDE_THROUGH_MS) {
    throw new TypeError(
      `Expected \`rideThroughMs\` to be 0 (off) or a whole number of milliseconds up to ${MAX_RIDE_THROUGH_MS}, how long past its deadline a primary whose renewals get no answer stays primary, got ${typeof value === "number" ? String(value) : typeof value}.`,
    );
  }
  return value;
}

function checkOptionalBoolean(name: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  throw new TypeError(`Expected \`${name}\` to be true or false, got ${typeof value}.`);
}
