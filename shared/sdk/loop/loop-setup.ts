import { systemElectorClock, type ElectorClock } from "./elector-clock.js";
import { environmentDefault } from "./environment.js";
import { HaClient } from "../transport/ha-client.js";
import { checkEndpoints, checkOptionalSignal, checkOptionalString, checkPositiveMs, DEFAULT_RETRY_DELAY_MS } from "./option-checks.js";
import type { TransportKind } from "./transport-kind.js";
import { batcherOf, type ParticipantBatcher, type ParticipantPart } from "../transport/participant-batcher.js";

/**
 * The options every SDK loop takes (PrimaryElector, MemberSession, MembersWatcher): how it
 * reaches the service, what stops it, and how it keeps time.
 */
export interface LoopOptions<Transport> {
  /**
   * The service's base URL, or several instances' (an array, or separated by commas: see
   * HaClientOptions.endpoint); or give `transport` instead. The elector's default: HA_ENDPOINT.
   */
  readonly endpoint?: string | readonly string[];
  /** The function key for `endpoint`. Default: HA_API_KEY, if set. */
  readonly apiKey?: string;
  /** Any transport of the calls it makes (an HaClient, or a fake in tests); excludes `endpoint`. */
  readonly transport?: Transport;
  /** Aborting stops it as stop() does. */
  readonly abortSignal?: AbortSignal;
  /**
   * Delay between attempts until the service has answered once and so told us I. After
   * that every delay derives from the I and T the service reports. Default 1000 ms.
   */
  readonly retryDelayInMs?: number;
  /** Monotonic time and timers; defaults to performance.now() and the process's timers. */
  readonly clock?: ElectorClock;
}

/**
 * A loop's LoopOptions, checked where they enter (one rule each, in this order: the transport,
 * retryDelayInMs, abortSignal, clock), with the defaults filled in; and the loop's part in its
 * participant from join() until leave() when the transport batches
 * (docs/sdk.md#one-request-per-participant).
 */
export class LoopSetup<Transport> {
  readonly transport: Transport;
  readonly retryDelayMs: number;
  readonly abortSignal: AbortSignal | undefined;
  readonly clock: ElectorClock;
  readonly #batcher: ParticipantBatcher | undefined;
  #part: ParticipantPart | undefined;

  constructor(options: LoopOptions<Transport>, kind: TransportKind<Transport>) {
    this.transport = transportOf(options, kind);
    this.retryDelayMs = checkPositiveMs("retryDelayInMs", options.retryDelayInMs, DEFAULT_RETRY_DELAY_MS);
    this.abortSignal = checkOptionalSignal("abortSignal", options.abortSignal);
    this.clock = checkClock(options.clock);
    this.#batcher = batcherOf(this.transport);
  }

  /** The loop's part of the participant, from join() until leave(); always undefined when the transport does not batch. */
  get part(): ParticipantPart | undefined {
    return this.#part;
  }

  join(): void {
    this.#part = this.#batcher?.join(this.clock);
  }

  leave(): void {
    this.#part?.leave();
  }
}

function checkClock(clock: ElectorClock | undefined): ElectorClock {
  if (clock === undefined) return systemElectorClock;
  if (typeof clock.now !== "function" || typeof clock.setTimeout !== "function" || typeof clock.clearTimeout !== "function") {
    throw new TypeError("Expected `clock` to have now(), setTimeout() and clearTimeout().");
  }
  return clock;
}

/** `transport` itself, or an HaClient for `endpoint` (and `apiKey`): exactly one of the two. */
function transportOf<Transport>(options: LoopOptions<Transport>, kind: TransportKind<Transport>): Transport {
  if (options.transport !== undefined && options.endpoint !== undefined) {
    throw new TypeError("Expected either `transport` or `endpoint`, not both: `endpoint` builds an HaClient, `transport` replaces it.");
  }
  if (options.transport !== undefined) {
    if (!kind.accepts(options.transport)) throw new TypeError(`Expected \`transport\` to implement ${kind.described}, e.g. an HaClient.`);
    return options.transport;
  }
  const endpoint = options.endpoint ?? (kind.endpointFromEnvironment ? environmentDefault("HA_ENDPOINT") : undefined);
  if (endpoint === undefined) {
    const orEnvironment = kind.endpointFromEnvironment ? ", or HA_ENDPOINT in the environment" : "";
    throw new TypeError(`Expected \`endpoint\` (the service URL, e.g. http://127.0.0.1:7071/api) or \`transport\` to be set${orEnvironment}.`);
  }
  checkEndpoints(options.endpoint === undefined ? "HA_ENDPOINT" : "endpoint", endpoint);
  // HaClient takes HA_API_KEY when no apiKey is given.
  const apiKey = checkOptionalString("apiKey", options.apiKey);
  const client: unknown = new HaClient({ endpoint, ...(apiKey === undefined ? {} : { apiKey }) });
  return client as Transport;
}
