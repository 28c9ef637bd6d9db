import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { Plan } from "./plan.js";
import { cpuSeconds, startLineProcess, type Line, type LineProcess } from "../helpers/processes.js";
import { sleep } from "./stats.js";

const FLEET = fileURLToPath(new URL("./fleet.js", import.meta.url));

export interface CapacityStep {
  readonly roles: number;
  readonly participants: number;
  /** Leadership changes and demotions during the window: any is a spurious failover. */
  readonly leaderChanges: number;
  readonly demotions: Record<string, number>;
  /** Share of role-time without a primary during the window (sampled). */
  readonly withoutPrimaryShare: number;
  /** Heartbeats answered per second over the window, as the electors counted them. */
  readonly heartbeatsPerSecond: number;
  /** Failed calls the electors counted during the window. */
  readonly failedCalls: number;
  /** Heartbeat round trip p99 the electors saw (the worst elector's). */
  readonly p99Ms: number | null;
  /** CPU of the service and of Azurite, in cores (1 = one core busy). */
  readonly serviceCores: number | undefined;
  readonly storeCores: number | undefined;
  readonly clean: boolean;
  /** Did every role get its primary before the window? */
  readonly settled: boolean;
}

export interface CapacityFigures {
  readonly steps: CapacityStep[];
  /** The largest clean step's roles × participants, 0 when the first step broke. */
  readonly cleanParticipants: number;
  /** What gave first at the first step that broke, or undefined when none broke. */
  readonly firstBreak: string | undefined;
}

/**
 * roles × 2 PrimaryElectors (two fleet processes, a primary and a standby per role) at the
 * service's I, stepping up the roles; a step is clean with no leadership change, no
 * demotion and every role with a primary at every sample over the window. Stops at the
 * first step that breaks and says what gave first.
 */
export async function measureCapacity(plan: Plan, serviceUrl: string, servicePid: number | undefined, storePid: number | undefined, log: (line: string) => void): Promise<CapacityFigures> {
  const steps: CapacityStep[] = [];
  let firstBreak: string | undefined;
  for (const [index, roles] of plan.capacitySteps.entries()) {
    const prefix = `cap${index}`;
    const fleets: LineProcess[] = [];
    try {
      const primaries = new Set<number>();
      const track = (fleet: LineProcess, standby: boolean): void =>
        fleet.onLine((line) => {
          if (standby) return;
          if (line.event === "elected") primaries.add(Number(line["role"]));
          if (line.event === "demoted") primaries.delete(Number(line["role"]));
        });
      const first = startLineProcess(FLEET, [serviceUrl, prefix, String(roles)]);
      fleets.push(first);
      track(first, false);
      const settleUntil = performance.now() + 2 * plan.timeoutMs + roles * 20 + 5000;
      while (primaries.size < roles && performance.now() < settleUntil) await sleep(100);
      const second = startLineProcess(FLEET, [serviceUrl, prefix, String(roles)]);
      fleets.push(second);
      await sleep(2 * plan.intervalMs + 1000);
      const settled = primaries.size === roles;

      const heldBy = new Map<number, number>(); // role → how many participants act as primary
      for (const role of primaries) heldBy.set(role, 1);
      const windowStart = performance.now();
      const events: Line[] = [];
      for (const fleet of fleets) {
        fleet.onLine((line) => {
          if (line.event !== "elected" && line.event !== "demoted") return;
          events.push(line);
          const role = Number(line["role"]);
          heldBy.set(role, (heldBy.get(role) ?? 0) + (line.event === "elected" ? 1 : -1));
        });
      }
      const statsBefore = await Promise.all(fleets.map((f) => fleetStats(f)));
      const cpu = [cpuSeconds(servicePid), cpuSeconds(storePid)];
      let samples = 0;
      let without = 0;
      while (performance.now() - windowStart < plan.capacityWindowMs) {
        await sleep(100);
        samples += 1;
        for (let role = 0; role < roles; role += 1) if ((heldBy.get(role) ?? 0) <= 0) without += 1;
      }
      const seconds = (performance.now() - windowStart) / 1000;
      const cpuAfter = [cpuSeconds(servicePid), cpuSeconds(storePid)];
      const statsAfter = await Promise.all(fleets.map((f) => fleetStats(f)));
      const demotions: Record<string, number> = {};
      for (const line of events.filter((l) => l.event === "demoted")) demotions[String(line["reason"])] = (demotions[String(line["reason"])] ?? 0) + 1;
      const leaderChanges = events.filter((l) => l.event === "elected").length;
      const cores = (i: number): number | undefined => (cpu[i] === undefined || cpuAfter[i] === undefined ? undefined : (cpuAfter[i]! - cpu[i]!) / seconds);
      const p99s = statsAfter.map((s) => s.p99Ms).filter((p): p is number => p !== null);
      const step: CapacityStep = {
        roles,
        participants: 2 * roles,
        leaderChanges,
        demotions,
        withoutPrimaryShare: without / Math.max(1, samples * roles),
        heartbeatsPerSecond: statsAfter.reduce((sum, s, i) => sum + s.heartbeats - (statsBefore[i]?.heartbeats ?? 0), 0) / seconds,
        failedCalls: statsAfter.reduce((sum, s, i) => sum + s.failures - (statsBefore[i]?.failures ?? 0), 0),
        p99Ms: p99s.length === 0 ? null : Math.max(...p99s),
        serviceCores: cores(0),
        storeCores: cores(1),
        settled,
        clean: settled && leaderChanges === 0 && events.length === 0 && without === 0,
      };
      steps.push(step);
      log(`capacity ${roles} roles × 2: ${step.clean ? "clean" : "broke"} (changes ${leaderChanges}, failed calls ${step.failedCalls}, service ${step.serviceCores?.toFixed(2)} cores, store ${step.storeCores?.toFixed(2)} cores)`);
      if (!step.clean) {
        firstBreak = describeBreak(step, plan);
        break;
      }
    } finally {
      await Promise.all(fleets.map((f) => f.kill("SIGKILL")));
    }
    // Let the killed fleet's leases run out before the next step adds load.
    if (index < plan.capacitySteps.length - 1) await sleep(plan.timeoutMs);
  }
  const clean = steps.filter((s) => s.clean);
  return { steps, cleanParticipants: clean.at(-1)?.participants ?? 0, firstBreak };
}

async function fleetStats(fleet: LineProcess): Promise<{ failures: number; heartbeats: number; p99Ms: number | null }> {
  const from = fleet.lines.length;
  fleet.child.stdin!.write("stats\n");
  const line = await fleet.waitFor((l) => l.event === "stats" && fleet.lines.indexOf(l) >= from, 30_000);
  return { failures: Number(line["failures"]), heartbeats: Number(line["heartbeats"]), p99Ms: line["p99Ms"] === null ? null : Number(line["p99Ms"]) };
}

/** The first symptom, in the order a failing fleet shows them. */
function describeBreak(step: CapacityStep, plan: Plan): string {
  const parts: string[] = [];
  if (!step.settled) parts.push("not every role got a primary within the settling time");
  if (step.p99Ms !== null && step.p99Ms > plan.intervalMs) parts.push(`heartbeat round trips p99 ${Math.round(step.p99Ms)} ms, above I`);
  if (step.failedCalls > 0) parts.push(`${step.failedCalls} calls failed (timeouts or 503)`);
  const reasons = Object.entries(step.demotions).map(([reason, n]) => `${n} × ${reason}`);
  if (reasons.length > 0) parts.push(`demotions: ${reasons.join(", ")}`);
  if (step.serviceCores !== undefined && step.storeCores !== undefined) {
    parts.push(`the ${step.serviceCores >= step.storeCores ? "service" : "store (Azurite)"} was the busier process (service ${step.serviceCores.toFixed(2)} cores, Azurite ${step.storeCores.toFixed(2)} cores)`);
  }
  return parts.join("; ");
}
