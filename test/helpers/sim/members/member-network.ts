import type { MemberHeartbeatBody, MemberHeartbeatResult, MemberLeaveResult, MemberList } from "../../../../shared/contract/members.js";
import type { RequestArrival } from "../../../../shared/service/request-budget.js";
import type { MemberService } from "../../../../shared/members/member-service.js";
import type { SweepMarkerRecord } from "../../../../shared/members/member.js";
import type { TimerHandle } from "../../../../shared/sdk/loop/elector-clock.js";
import { HaRequestError } from "../../../../shared/sdk/transport/ha-request-error.js";
import type { CallOptions } from "../../../../shared/sdk/transport/lease-transport.js";
import type { MembersTransport } from "../../../../shared/sdk/transport/members-transport.js";
import type { SimProcess } from "../process.js";
import type { Prng } from "../prng.js";
import type { SimWorld } from "../world.js";
import type { MemberSimInstance } from "./member-instance.js";
import type { FaultyMemberLink } from "./member-store-link.js";
import type { MemberScenario } from "./member-scenario.js";
import type { MemberSimStats } from "./member-stats.js";

/**
 * A listing as one watcher received it: when and on which ha_time the service judged it,
 * the ha_time its read began, and the marker that read returned (the one it judged by).
 */
export interface ReceivedList {
  readonly judgedHaTime: number;
  readonly readFromHaTime: number;
  readonly deliveredAt: number;
  readonly marker: SweepMarkerRecord | undefined;
  readonly list: MemberList;
}

export interface MemberNetworkDeps {
  readonly world: SimWorld;
  readonly rng: Prng;
  readonly instances: readonly MemberSimInstance[];
  readonly faults: () => MemberScenario["network"];
  /** The functions are down: the platform answers 503 without running anything. */
  readonly serviceDown: () => boolean;
  readonly stats: MemberSimStats;
  /** The service threw something other than StoreUnavailableError: a 500, which is a bug. */
  readonly onServiceError: (error: unknown) => void;
}

/**
 * One process's link to the service, as the lease simulation's: a request travels
 * 0..maxDelayMs to a random instance and may be lost, answered 503 by the platform, or
 * delivered twice; each answer travels back on its own delay; timeouts run on the
 * process's own timers. `onList` sees every listing the process receives.
 */
export class SimMembersTransport implements MembersTransport {
  constructor(
    private readonly deps: MemberNetworkDeps,
    private readonly process: SimProcess,
    private readonly onList?: (received: ReceivedList) => void,
  ) {}

  memberHeartbeat(group: string, member: string, body: MemberHeartbeatBody, options?: CallOptions): Promise<MemberHeartbeatResult> {
    return this.#send(async (service, arrival) => {
      const result = await service.heartbeat({ group, member, ...body }, arrival);
      this.deps.stats.count(HEARTBEAT_STAT[result.outcome]);
      return result;
    }, options);
  }

  leaveGroup(group: string, member: string, session: string, options?: CallOptions): Promise<MemberLeaveResult> {
    return this.#send((service, arrival) => service.leave({ group, member, session }, arrival), options);
  }

  async listMembers(group: string, options?: CallOptions): Promise<MemberList> {
    const judged = await this.#send(async (service, arrival, instance, link) => {
      const readFromHaTime = instance.haTime();
      const list = await service.list(group, arrival);
      return { list, judgedHaTime: instance.haTime(), readFromHaTime, marker: link.listed?.marker };
    }, options);
    this.onList?.({ ...judged, deliveredAt: this.deps.world.now });
    return judged.list;
  }

  #send<T>(handle: (service: MemberService, arrival: RequestArrival, instance: MemberSimInstance, link: FaultyMemberLink) => Promise<T>, options: CallOptions = {}): Promise<T> {
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
        timer = this.process.setTimeout(() => finish(() => reject(new HaRequestError(`no answer within ${options.timeoutInMs} ms`, "Timeout", undefined))), options.timeoutInMs);
      }
      stats.count("requests");
      const faults = this.deps.faults();
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
          const down = this.deps.serviceDown();
          if (down) stats.count("serviceOutage503s");
          else if (gateway503) stats.count("gateway503s");
          const handled: Promise<T> = down || gateway503 ? Promise.reject(new HaRequestError("503 Service Unavailable", "UnexpectedResponse", 503)) : instance.serve(handle);
          handled.then(
            (value) => this.#answer(answerLost, back, () => finish(() => resolve(value))),
            (error: unknown) => {
              if (!(error instanceof HaRequestError) && !(error instanceof Error && error.name === "StoreUnavailableError")) this.deps.onServiceError(error);
              const status = error instanceof HaRequestError ? error : new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503);
              this.#answer(answerLost, back, () => finish(() => reject(status)));
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
}

const HEARTBEAT_STAT = {
  accepted: "heartbeatsAccepted",
  held: "heartbeatsHeld",
  ended: "heartbeatsEnded",
  conflict: "heartbeatsConflict",
} as const;
