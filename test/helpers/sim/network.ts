import type { LeaseService } from "../../../shared/lease/lease-service.js";
import type { MemberService } from "../../../shared/members/member-service.js";
import type { RequestArrival } from "../../../shared/service/request-budget.js";
import { HaRequestError } from "../../../shared/sdk/transport/ha-request-error.js";
import type { TimerHandle } from "../../../shared/sdk/loop/elector-clock.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, ReleaseOptions, ReleaseResult } from "../../../shared/sdk/index.js";
import type { SimInstance } from "./instance.js";
import type { SimProcess } from "./process.js";
import type { Prng } from "./prng.js";
import type { NetworkFaults } from "./scenario.js";
import type { SimStats } from "./stats.js";
import type { SimWorld } from "./world.js";

export interface NetworkDeps {
  readonly world: SimWorld;
  readonly rng: Prng;
  readonly instances: readonly SimInstance[];
  readonly faults: () => NetworkFaults;
  readonly stats: SimStats;
  /** Planted elector bug: every answer tells it T + I, so its deadline is sentAt + T. */
  readonly inflateTimeoutMs: number;
  /** Planted elector bug: told of a pending handover, the holder releases at once and is not told (it believes until its deadline). */
  readonly releaseBeforeStepDown: boolean;
  /** Planted participant-link bug: a participant heartbeat's parts run without the request's arrival (no budget). */
  readonly partsWithoutBudget: boolean;
  /** The service threw something other than StoreUnavailableError: a 500, which is a bug. */
  readonly onServiceError: (error: unknown) => void;
}

/**
 * One elector process's link to the service. A request travels 0..maxDelayMs to a random
 * function instance; it may be lost, answered 503 by a gateway, or delivered twice (the
 * copy up to maxDelayMs later, maybe to another instance). Each answer travels back on its
 * own delay, so answers arrive in any order; the caller takes the first that arrives.
 * Timeouts run on the process's own timers, so a paused process times out late.
 */
export class SimTransport implements LeaseTransport {
  constructor(
    private readonly deps: NetworkDeps,
    private readonly process: SimProcess,
  ) {}

  getPrimary(utype: string, options?: CallOptions): Promise<LeaseView> {
    return this.send((service, arrival) => service.getPrimary(utype, arrival), options);
  }

  heartbeat(utype: string, request: HeartbeatBody, options?: CallOptions): Promise<HeartbeatResult> {
    return this.send((service, arrival) => this.withPlants(service, arrival).heartbeat({ utype, ...request }, arrival), options, request.lease !== undefined);
  }

  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult> {
    return this.send((service, arrival) => service.release({ utype, uuid, lease: options?.lease }, arrival), options);
  }

  /**
   * The service as this link's heartbeats reach it: each outcome counted, and the planted
   * bug of a holder that releases before it steps down. A participant heartbeat's role
   * parts go through it too.
   */
  protected withPlants(service: LeaseService, arrival: RequestArrival): Pick<LeaseService, "heartbeat" | "getPrimary"> {
    return {
      getPrimary: (utype, at, options) => service.getPrimary(utype, at ?? arrival, options),
      heartbeat: async (request, at) => {
        const input = { utype: request.utype, uuid: request.uuid, address: request.address, lease: request.lease, ...(request.announce === true ? { announce: true } : {}) };
        const result = await service.heartbeat(input, at);
        this.deps.stats.count(HEARTBEAT_STAT[result.outcome]);
        if (this.deps.releaseBeforeStepDown && result.outcome === "accepted" && result.view.handover?.phase === "pending") {
          await service.release({ utype: input.utype, uuid: input.uuid, lease: result.lease }, at);
          return { ...result, view: { ...result.view, handover: null } };
        }
        return result;
      },
    };
  }

  protected stats(): SimStats {
    return this.deps.stats;
  }

  /** The arrival a participant heartbeat's parts run on: the request's, unless the planted bug drops it. */
  protected partsArrival(arrival: RequestArrival): RequestArrival | undefined {
    return this.deps.partsWithoutBudget ? undefined : arrival;
  }

  /** A service error that is not a store failure is a bug (a 500): the run fails. */
  protected reportIfBug(error: unknown): void {
    if (!isStoreUnavailable(error) && !(error instanceof HaRequestError)) this.deps.onServiceError(error);
  }

  /** `renewal`: a primary's renewal (with `renewalsOnly`, the only calls that meet loss and 503s). */
  protected send<T>(handle: (service: LeaseService, arrival: RequestArrival, members: () => MemberService) => Promise<T>, options: CallOptions = {}, renewal = false): Promise<T> {
    const { world, rng, instances, stats } = this.deps;
    return new Promise<T>((resolve, reject) => {
      let done = false;
      let timer: TimerHandle | undefined;
      const finish = (settle: () => void): void => {
        if (done) return;
        done = true;
        if (timer !== undefined) this.process.clearTimeout(timer);
        options.abortSignal?.removeEventListener("abort", onAbort);
        settle();
      };
      const onAbort = (): void => finish(() => reject(options.abortSignal!.reason));
      options.abortSignal?.addEventListener("abort", onAbort, { once: true });
      if (options.timeoutInMs !== undefined) {
        timer = this.process.setTimeout(
          () => finish(() => reject(new HaRequestError(`no answer within ${options.timeoutInMs} ms`, "Timeout", undefined))),
          options.timeoutInMs,
        );
      }
      stats.count("requests");
      const weather = this.deps.faults();
      const faults = weather.renewalsOnly === true && !renewal ? { ...weather, lossRate: 0, unavailableRate: 0 } : weather;
      const copies = [world.now + rng.int(0, faults.maxDelayMs)];
      if (rng.chance(faults.duplicateRate)) copies.push(copies[0]! + rng.int(0, faults.maxDelayMs));
      copies.forEach((arrivesAt, copy) => {
        if (rng.chance(faults.lossRate)) {
          stats.count("requestsLost");
          return;
        }
        if (copy > 0) stats.count("duplicatesDelivered");
        const gateway503 = rng.chance(faults.unavailableRate);
        const instance = rng.pick(instances);
        const answerLost = rng.chance(faults.lossRate);
        const back = rng.int(0, faults.maxDelayMs);
        world.schedule(arrivesAt, () => {
          const handled: Promise<T> = gateway503
            ? Promise.reject(new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503))
            : instance.serve(handle);
          if (gateway503) stats.count("gateway503s");
          handled.then(
            (value) => this.#answer(answerLost, back, () => finish(() => resolve(this.inflate(value)))),
            (error: unknown) => {
              this.reportIfBug(error);
              this.#answer(answerLost, back, () => finish(() => reject(new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503))));
            },
          );
        });
      });
    });
  }

  #answer(lost: boolean, delay: number, deliver: () => void): void {
    if (lost) {
      this.deps.stats.count("answersLost");
      return;
    }
    this.deps.world.schedule(this.deps.world.now + delay, () => this.process.post(deliver));
  }

  protected inflate<T>(value: T): T {
    const by = this.deps.inflateTimeoutMs;
    if (by === 0) return value;
    const inflate = (view: LeaseView): LeaseView => ({ ...view, timeoutMs: view.timeoutMs + by });
    const result = value as { view?: LeaseView; primary?: unknown };
    if (result.view !== undefined) return { ...result, view: inflate(result.view) } as T;
    // Only lease answers carry the lease timing (a member's answer has its own).
    return result.primary === undefined ? value : (inflate(value as LeaseView) as T);
  }
}

const HEARTBEAT_STAT = {
  accepted: "heartbeatsAccepted",
  held: "heartbeatsHeld",
  conflict: "heartbeatsConflict",
  revoked: "heartbeatsRevoked",
} as const;

function isStoreUnavailable(error: unknown): boolean {
  return error instanceof Error && error.name === "StoreUnavailableError";
}
