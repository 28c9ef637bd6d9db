import type { LeaseService } from "../../../shared/lease/lease-service.js";
import type { MemberService } from "../../../shared/members/member-service.js";
import type { RequestArrival } from "../../../shared/service/request-budget.js";
import { HaRequestError } from "../../../shared/sdk/transport/ha-request-error.js";
import type { TimerHandle } from "../../../shared/sdk/loop/elector-clock.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, ReleaseOptions, ReleaseResult } from "../../../shared/sdk/index.js";
import { CorruptedMessageError } from "../../../shared/sdk/transport/corrupted-message-error.js";
import { isOutage } from "../../../shared/sdk/loop/poll-delays.js";
import { SimAnswerLost, SimConnectionRefused, type SimInstance } from "./instance.js";
import type { SimProcess } from "./process.js";
import type { Prng } from "./prng.js";
import type { RenewalLog } from "./renewal-log.js";
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
  /** The service out for everyone now: a request reaching it gets no answer (`silent`) or is refused at once. */
  readonly serviceOutage: () => "silent" | "refused" | undefined;
  /** Whether the participant in `slot` is cut off from the service now (a partition of one). */
  readonly cutOff: (slot: number) => boolean;
  /** The answers to renewals as they reach each elector, for the `ride-through` invariant. */
  readonly renewalAnswers: RenewalAnswer[];
  /** Planted elector bug: a call that met an outage reaches a standby as a corrupted answer, so it never knows it lost contact. */
  readonly hideLostContact: boolean;
  /** Planted elector bug: a refusal of a renewal reaches a primary riding through as a timeout, so its ride goes on. */
  readonly hideRefusalsWhileRiding: boolean;
  /** A planted bug: heartbeats reach the service without their lease token. */
  readonly heartbeatsWithoutToken?: boolean;
  /** Where heartbeats and answers are noted for the `renewal-copies` judge. */
  readonly renewals: RenewalLog;
}

/** An answer to a renewal, as it reached the elector's process. */
export interface RenewalAnswer {
  readonly at: number;
  readonly process: SimProcess;
  readonly utype: string;
  readonly uuid: string;
  /** Not accepted, and not this uuid's own echo (itself the live holder): it ends a term, ridden through or not. */
  readonly refusal: boolean;
}

/**
 * One elector process's link to the service. A request travels 0..maxDelayMs to a random
 * function instance; it may be lost, answered 503 by a gateway, or delivered twice (the
 * copy up to maxDelayMs later, maybe to another instance). Each answer travels back on its
 * own delay, so answers arrive in any order; the caller takes the first that arrives.
 * Timeouts run on the process's own timers, so a paused process times out late.
 */
/** One call as its caller lived it: sent, and settled (answered, failed, timed out or aborted) or not yet. */
export interface SimCall {
  readonly sentAt: number;
  settledAt: number | undefined;
}

export class SimTransport implements LeaseTransport {
  /** Whether this process's elector of `utype` rides through now (for the planted bug that hides refusals from it). */
  riding: (utype: string) => boolean = () => false;
  /** Every call made through it: when it was sent and when its caller had an answer, a failure or gave up. */
  readonly calls: SimCall[] = [];

  constructor(
    private readonly deps: NetworkDeps,
    private readonly process: SimProcess,
    /** The participant's slot: a partition cuts off whoever runs in it. */
    private readonly slot: number,
  ) {}

  getPrimary(utype: string, options?: CallOptions): Promise<LeaseView> {
    return this.send((service, arrival) => service.getPrimary(utype, arrival), options);
  }

  heartbeat(utype: string, request: HeartbeatBody, options?: CallOptions): Promise<HeartbeatResult> {
    const sentAt = this.deps.renewals.sent(request.uuid, request.lease !== undefined);
    const answered = this.send((service, arrival) => this.withPlants(service, arrival).heartbeat({ utype, ...request }, arrival), options, request.lease !== undefined, (result) => {
      if (result.outcome === "accepted") this.deps.renewals.accepted(request.uuid, sentAt);
    });
    return request.lease === undefined ? answered : answered.then((result) => this.renewalAnswered(utype, request.uuid, result));
  }

  /**
   * A renewal's answer reaches the elector: recorded, and with the planted bug, a refusal
   * while it rides through is turned into a timeout (after it was recorded as delivered).
   */
  protected renewalAnswered(utype: string, uuid: string, result: HeartbeatResult): HeartbeatResult {
    const primary = result.view.primary;
    const refusal = result.outcome !== "accepted" && !(primary !== null && primary.uuid === uuid && !primary.revoked);
    this.deps.renewalAnswers.push({ at: this.deps.world.now, process: this.process, utype, uuid, refusal });
    if (refusal && this.deps.hideRefusalsWhileRiding && this.riding(utype)) throw new HaRequestError("no answer (a refusal, hidden by the planted bug)", "Timeout", undefined);
    return result;
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
        // With the planted bug that forgets ended uuids, the service sees no token either: a
        // token naming an ended term would still refuse a dead uuid's late request.
        const lease = this.deps.heartbeatsWithoutToken === true ? undefined : request.lease;
        const input = {
          utype: request.utype,
          uuid: request.uuid,
          address: request.address,
          lease,
          ...(request.announce === true ? { announce: true } : {}),
          ...(request.priority === undefined ? {} : { priority: request.priority }),
          ...(request.preempt === true ? { preempt: true } : {}),
        };
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

  protected renewals(): RenewalLog {
    return this.deps.renewals;
  }

  /** A part of an answer failed: the elector's renewal may have ended early, so its copies are not judged. */
  protected partFailed(): void {
    this.deps.renewals.partFailed(this.process);
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
  /** `delivered` sees an answer as it reaches the caller (not one that comes after its timeout or abort). */
  protected send<T>(
    handle: (service: LeaseService, arrival: RequestArrival, members: () => MemberService) => Promise<T>,
    options: CallOptions = {},
    renewal = false,
    delivered: (value: T) => void = () => undefined,
  ): Promise<T> {
    const { world, rng, instances, stats } = this.deps;
    const call: SimCall = { sentAt: world.now, settledAt: undefined };
    this.calls.push(call);
    return new Promise<T>((resolve, rejectCall) => {
      let done = false;
      let timer: TimerHandle | undefined;
      // The planted bug: a standby's call that met an outage looks like a corrupted answer to it.
      const reject = (error: unknown): void =>
        rejectCall(this.deps.hideLostContact && !renewal && isOutage(error) ? new CorruptedMessageError("a failed call (the planted bug hides the outage)", 200) : error);
      const finish = (settle: () => void): void => {
        if (done) return;
        done = true;
        call.settledAt = world.now;
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
      if (this.deps.cutOff(this.slot)) {
        // Cut off from the service: the request never leaves, and the caller times out.
        stats.count("partitionedCalls");
        return;
      }
      const sentAt = world.now;
      const weather = this.deps.faults();
      const faults = weather.renewalsOnly === true && !renewal ? { ...weather, lossRate: 0, unavailableRate: 0 } : weather;
      // The slow tail draws nothing unless the scenario has one, so other scenarios replay unchanged.
      const leg = (): number => rng.int(0, faults.maxDelayMs) + (faults.slowRate !== undefined && faults.slowRate > 0 && rng.chance(faults.slowRate) ? rng.int(0, faults.slowMs ?? 0) : 0);
      const copies = [world.now + leg()];
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
        const back = leg();
        world.schedule(arrivesAt, () => {
          const outage = this.deps.serviceOutage();
          if (outage === "silent") {
            stats.count("serviceOutageCalls");
            return;
          }
          const handled: Promise<T> =
            outage === "refused"
              ? Promise.reject(new SimConnectionRefused("the service is down"))
              : gateway503
                ? Promise.reject(new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503))
                : instance.serve(handle);
          if (outage === "refused") stats.count("serviceOutageCalls");
          else if (gateway503) stats.count("gateway503s");
          handled.then(
            (value) =>
              this.#answer(answerLost, back, () => {
                this.deps.renewals.answered(this.process, sentAt, false);
                finish(() => {
                  const answer = this.inflate(value);
                  delivered(answer);
                  resolve(answer);
                });
              }),
            (error: unknown) => {
              if (error instanceof SimAnswerLost) {
                stats.count("answersLostInRestarts");
                return;
              }
              const failure =
                error instanceof SimConnectionRefused
                  ? new HaRequestError("connect ECONNREFUSED (simulated)", "NetworkError", undefined)
                  : new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503);
              if (error instanceof SimConnectionRefused) stats.count("refusedConnections");
              else this.reportIfBug(error);
              this.#answer(answerLost, back, () => {
                this.deps.renewals.answered(this.process, sentAt, true);
                finish(() => reject(failure));
              });
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
    this.deps.world.schedule(this.deps.world.now + delay, () => {
      // An answer that arrives while its participant is cut off is dropped on the way.
      if (this.deps.cutOff(this.slot)) {
        this.deps.stats.count("partitionedCalls");
        return;
      }
      this.process.post(deliver);
    });
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
