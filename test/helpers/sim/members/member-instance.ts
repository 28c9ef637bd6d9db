import type { MemberList } from "../../../../shared/contract/members.js";
import type { RequestArrival } from "../../../../shared/service/request-budget.js";
import { MemberService } from "../../../../shared/members/member-service.js";
import { MemberSweeper, type SweepReport } from "../../../../shared/members/member-sweeper.js";
import type { MemberTokenSigner } from "../../../../shared/members/member-token.js";
import type { MembershipRules } from "../../../../shared/members/membership-rules.js";
import { SimProcess } from "../process.js";
import type { Prng } from "../prng.js";
import type { SimWorld } from "../world.js";
import { FaultyMemberLink, type MemberStoreWeather } from "./member-store-link.js";
import type { MemberPlant, MemberScenario } from "./member-scenario.js";
import type { MemberSimStats } from "./member-stats.js";
import type { RecordingMemberStore } from "./recording-member-store.js";

export interface MemberInstanceDeps {
  readonly world: SimWorld;
  readonly rng: Prng;
  readonly store: RecordingMemberStore;
  readonly weather: MemberStoreWeather;
  readonly scenario: MemberScenario;
  readonly tokens: MemberTokenSigner;
  readonly stats: MemberSimStats;
}

/**
 * One function instance: its own ha_time (simulated time + its skew) and its own process,
 * serving the real MemberService (and running the real MemberSweeper) over a faulty link to
 * the one shared store. A planted bug changes the rules the service judges by, never the
 * timing it tells.
 */
export class MemberSimInstance {
  readonly process: SimProcess;

  constructor(
    private readonly deps: MemberInstanceDeps,
    readonly index: number,
    readonly skewMs: number,
  ) {
    this.process = new SimProcess(deps.world, 1, 1_000_000 * (index + 1), true);
  }

  haTime(): number {
    return this.deps.world.now + this.skewMs;
  }

  /** Runs one request on a fresh MemberService over a link of its own, which `handle` gets too. */
  serve<T>(handle: (service: MemberService, arrival: RequestArrival, instance: MemberSimInstance, link: FaultyMemberLink) => Promise<T>): Promise<T> {
    const { world, scenario } = this.deps;
    return new Promise<T>((resolve, reject) => {
      this.process.post(() => {
        const arrival = { arrivedAt: this.process.now() };
        const link = this.#link(world.now + scenario.storeTimeoutMs);
        const service = new MemberService({
          store: link,
          clock: { now: () => this.haTime() },
          monotonic: this.process,
          rules: decisionRules(scenario),
          tokens: this.deps.tokens,
          storeTimeoutMs: scenario.storeTimeoutMs,
        });
        handle(service, arrival, this, link).then((value) => resolve(toldTiming(value, scenario)), reject);
      });
    });
  }

  /** One run of the sweeper, as the timer trigger runs it on one instance. */
  sweep(): Promise<SweepReport> {
    const { world, scenario } = this.deps;
    return new Promise<SweepReport>((resolve, reject) => {
      this.process.post(() => {
        const sweeper = new MemberSweeper({
          // Each call has its own budget; the link cuts the whole sweep off after a few of them.
          store: this.#link(world.now + 4 * scenario.storeTimeoutMs),
          clock: { now: () => this.haTime() },
          monotonic: this.process,
          rules: decisionRules(scenario),
          storeTimeoutMs: scenario.storeTimeoutMs,
        });
        sweeper.sweep(() => undefined).then(resolve, reject);
      });
    });
  }

  #link(budgetEndsAt: number): FaultyMemberLink {
    const { world, rng, store, weather, stats } = this.deps;
    return new FaultyMemberLink(world, rng, store, weather, this.process, budgetEndsAt, stats);
  }
}

export function membershipRules(scenario: MemberScenario): MembershipRules {
  const { intervalMs, timeoutMs, ttlMs, retentionMs, maxPerGroup, sweepPeriodMs } = scenario.timing;
  return { intervalMs, timeoutMs, ttlMs, retentionMs, maxPerGroup, sweepPeriodMs };
}

function decisionRules(scenario: MemberScenario): MembershipRules {
  const rules = membershipRules(scenario);
  const plant: MemberPlant | undefined = scenario.plant;
  if (plant === "ttl-is-t") return { ...rules, ttlMs: rules.timeoutMs + 1 };
  if (plant === "unreachable-at-2t") return { ...rules, timeoutMs: 2 * rules.timeoutMs };
  if (plant === "ages-count-outages") return { ...rules, sweepPeriodMs: 1e12 };
  return rules;
}

/** The planted bugs judge by other rules, but every answer tells the configured I, T and ttl. */
function toldTiming<T>(value: T, scenario: MemberScenario): T {
  if (scenario.plant === undefined) return value;
  const { intervalMs, timeoutMs, ttlMs } = scenario.timing;
  const told = { intervalMs, timeoutMs, ttlMs };
  const result = value as { answer?: object; members?: unknown };
  if (result.answer !== undefined) return { ...result, answer: { ...result.answer, ...told } } as T;
  if (result.members !== undefined) return { ...(value as MemberList), ...told } as T;
  return value;
}
