import { randomUUID } from "node:crypto";
import type { ElectorMembershipOptions } from "./elector-membership.js";
import { systemElectorClock, type ElectorClock } from "./elector-clock.js";
import { environmentDefault } from "./environment.js";
import { HaClient } from "./ha-client.js";
import { checkOptionalMeter, type ElectorMeter } from "./elector-meter.js";
import type { LeaseTransport } from "./lease-transport.js";
import {
  checkEndpoint,
  checkId,
  checkOptionalAddress,
  checkOptionalFunction,
  checkOptionalSignal,
  checkOptionalString,
  checkPositiveMs,
  DEFAULT_RETRY_DELAY_MS,
} from "./option-checks.js";

export interface PrimaryElectorOptions {
  /** The role to compete for. */
  readonly utype: string;
  /** Where this participant can be reached; GetPrimary shows it to everyone. */
  readonly address?: string;
  /** The service's base URL; or give `transport` instead. Default: HA_ENDPOINT. */
  readonly endpoint?: string;
  /** The function key for `endpoint`. Default: HA_API_KEY, if set. */
  readonly apiKey?: string;
  /** Any LeaseTransport (an HaClient, or a fake in tests); excludes `endpoint`. */
  readonly transport?: LeaseTransport;
  /** Compete only while this other utype's primary is at our `address` (co-located services). */
  readonly affinity?: string;
  /** Aborting stops the elector as stop() does. */
  readonly abortSignal?: AbortSignal;
  /**
   * Delay between attempts until the service has answered once and so told us I. After
   * that every delay derives from the I and T the service reports. Default 1000 ms.
   */
  readonly retryDelayInMs?: number;
  /** Monotonic time and timers; defaults to performance.now() and the process's timers. */
  readonly clock?: ElectorClock;
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
}

/** The options, checked, with every default filled in. */
export interface ElectorSettings {
  readonly utype: string;
  readonly address: string | undefined;
  readonly affinity: string | undefined;
  readonly transport: LeaseTransport;
  readonly retryDelayMs: number;
  readonly abortSignal: AbortSignal | undefined;
  readonly announce: boolean;
  readonly clock: ElectorClock;
  readonly newUuid: () => string;
  readonly random: () => number;
  readonly meter: ElectorMeter | undefined;
}

/** Checks every option where it enters, one rule per `if`, with a message that says what to change. */
export function resolveElectorOptions(options: PrimaryElectorOptions): ElectorSettings {
  if (typeof options !== "object" || options === null) {
    throw new TypeError('Expected the PrimaryElector options to be an object such as { utype: "scheduler", endpoint: "http://127.0.0.1:7071/api" }.');
  }
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
    transport: resolveTransport(options),
    retryDelayMs: checkPositiveMs("retryDelayInMs", options.retryDelayInMs, DEFAULT_RETRY_DELAY_MS),
    abortSignal: checkOptionalSignal("abortSignal", options.abortSignal),
    clock: checkClock(options.clock),
    newUuid: checkOptionalFunction("newUuid", options.newUuid) ?? randomUUID,
    random: checkOptionalFunction("random", options.random) ?? Math.random,
    meter: checkOptionalMeter(options.meter),
    announce: checkOptionalBoolean("announce", options.announce) ?? true,
  };
}

function checkClock(clock: ElectorClock | undefined): ElectorClock {
  if (clock === undefined) return systemElectorClock;
  if (typeof clock.now !== "function" || typeof clock.setTimeout !== "function" || typeof clock.clearTimeout !== "function") {
    throw new TypeError("Expected `clock` to have now(), setTimeout() and clearTimeout().");
  }
  return clock;
}

function resolveTransport(options: PrimaryElectorOptions): LeaseTransport {
  if (options.transport !== undefined && options.endpoint !== undefined) {
    throw new TypeError("Expected either `transport` or `endpoint`, not both: `endpoint` builds an HaClient, `transport` replaces it.");
  }
  if (options.transport !== undefined) {
    if (typeof options.transport?.heartbeat !== "function") {
      throw new TypeError("Expected `transport` to implement LeaseTransport (getPrimary, heartbeat, release), e.g. an HaClient.");
    }
    return options.transport;
  }
  const endpoint = options.endpoint ?? environmentDefault("HA_ENDPOINT");
  if (endpoint === undefined) {
    throw new TypeError("Expected `endpoint` (the service URL, e.g. http://127.0.0.1:7071/api) or `transport` to be set, or HA_ENDPOINT in the environment.");
  }
  checkEndpoint(options.endpoint === undefined ? "HA_ENDPOINT" : "endpoint", endpoint);
  // HaClient takes HA_API_KEY when no apiKey is given.
  const apiKey = checkOptionalString("apiKey", options.apiKey);
  return new HaClient({ endpoint, ...(apiKey === undefined ? {} : { apiKey }) });
}

function checkOptionalBoolean(name: string, value: unknown): boolean | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  throw new TypeError(`Expected \`${name}\` to be true or false, got ${typeof value}.`);
}
