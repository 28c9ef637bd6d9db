import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Cluster } from "./cluster.js";
import { nsToMs } from "./distribution.js";
import { FaultSchedule, failoverClass, isParticipantFault, type FaultPlan } from "./fault-plan.js";
import { FRESH_MS, type Incident, type JudgedFault, type Leftover } from "./judge.js";
import { findLeftovers } from "./leftovers.js";
import { parseLog } from "./log-line.js";
import { LogTail } from "./log-tail.js";
import type { ChaosOptions } from "./options.js";
import type { Participant } from "./participant.js";
import { Prng } from "../helpers/sim/prng.js";
import { writerKey } from "./writers.js";

/** What a run did, for the judge: every timestamp on the host's monotonic clock, as in the log. */
export interface ChaosRecord {
  readonly logPath: string;
  readonly faults: readonly JudgedFault[];
  readonly observedUntilNs: bigint;
  readonly leftovers: readonly Leftover[];
  readonly incidents: readonly Incident[];
  readonly clock: ClockFigures;
  /** From the start of the participants to the first line of the first worker. */
  readonly firstWorkerMs: number | undefined;
  readonly interrupted: boolean;
}

export interface ClockFigures {
  /** The smallest positive step between two reads of process.hrtime.bigint(): its resolution, at most. */
  readonly smallestStepNs: number;
  /** The median time one read takes. */
  readonly medianReadNs: number;
}

const FIRST_WORKER_TIMEOUT_MS = 60_000;
const RUN_EXIT_TIMEOUT_MS = 15_000;
const COMPETING_TIMEOUT_MS = 30_000;

const now = (): bigint => process.hrtime.bigint();

/**
 * Runs the cycles: one fault each, chosen by the seeded schedule, held, healed, and then a
 * wait until a worker runs again (or the recovery bound has long passed; the judge decides).
 * `say` gets a line per cycle. Aborting ends the run after the current cycle, healed.
 */
export async function runChaos(options: ChaosOptions, workDir: string, say: (text: string) => void, abortSignal: AbortSignal): Promise<ChaosRecord> {
  const logPath = join(workDir, "chaos.log");
  writeFileSync(logPath, "");
  const clock = measureClock();
  const storeLabel = options.store === "process" ? "Azurite as its own process, " : options.store === "postgres" ? "PostgreSQL as its own process, " : "";
  say(`starting ${storeLabel}ha-module serve and ${options.participants} participants`);
  const cluster = await Cluster.start(options, workDir, logPath);
  const tail = new LogTail(logPath);
  const faults: JudgedFault[] = [];
  try {
    const startedAt = now();
    const first = await tail.waitFor(() => true, FIRST_WORKER_TIMEOUT_MS);
    const firstWorkerMs = first === undefined ? undefined : nsToMs(first.atNs - startedAt);
    say(first === undefined ? `no worker started within ${FIRST_WORKER_TIMEOUT_MS} ms; no faults injected` : `first worker: ${first.participant}, epoch ${first.epoch}, ${firstWorkerMs} ms after the participants started`);
    await allCompeting(cluster, say);
    // A lease's length for every participant to be elected or to see who is, and start its worker.
    await sleep(options.timeoutMs);
    const schedule = new FaultSchedule(new Prng(options.seed), options.faults, options);
    const recoveryWaitMs = options.timeoutMs + 2 * options.intervalMs + options.slackMs + 5000;
    // With store-rollback enabled, a copy of the store at the start of each cycle: a rollback
    // goes back to the copy of one or two cycles before it, forgetting what they wrote.
    const copies: string[] = [];
    for (let cycle = 1; first !== undefined && cycle <= options.cycles && !abortSignal.aborted; cycle += 1) {
      await restartCrashed(cluster);
      if (options.faults.includes("store-rollback")) {
        const copy = join(workDir, `store-copy-${cycle}.json`);
        if (cluster.copyStore(copy)) copies.push(copy);
      }
      // A fault lands on a cluster whose every run competes (a restarted run needs a few seconds to load).
      await allCompeting(cluster, say);
      const plan = schedule.next(cycle);
      const { fault, ended, label } = await inject(plan, cluster, tail, copies);
      faults.push(fault);
      const recovered = await tail.lineAfter(fault.healedAtNs, ended, recoveryWaitMs);
      say(
        `cycle ${cycle}/${options.cycles} ${label}, held ${fault.holdMs} ms → ` +
          (recovered === undefined
            ? `no worker within ${recoveryWaitMs} ms of the heal`
            : `${recovered.participant} (epoch ${recovered.epoch}) working ${nsToMs(recovered.atNs - fault.healedAtNs)} ms after the heal`),
      );
      await sleep(plan.settleMs);
    }
    await sleep(Math.max(options.intervalMs, FRESH_MS));
    const observedUntilNs = now();
    say("stopping: SIGTERM to every run, then the service and the store");
    await cluster.stop();
    say("looking for workers and watchdogs that outlived their run");
    const leftovers = await findLeftovers(parseLog(readFileSync(logPath, "utf8")).lines, logPath, cluster.participants);
    return { logPath, faults, observedUntilNs, leftovers, incidents: cluster.incidents, clock, firstWorkerMs, interrupted: abortSignal.aborted };
  } finally {
    tail.close();
    await cluster.kill();
  }
}

/** A `run` that exited unasked (already an incident) is started again, so the run goes on. */
async function restartCrashed(cluster: Cluster): Promise<void> {
  for (const participant of cluster.participants) if (!participant.running) participant.start();
}

async function allCompeting(cluster: Cluster, say: (text: string) => void): Promise<void> {
  const ready = await Promise.all(cluster.participants.map((p) => p.competing(COMPETING_TIMEOUT_MS)));
  const late = cluster.participants.filter((_, index) => !ready[index]).map((p) => p.name);
  if (late.length > 0) say(`not competing ${COMPETING_TIMEOUT_MS} ms after their start: ${late.join(", ")}`);
}

/** Carries out one fault and heals it. `ended`: the worker it ended, which does not count as recovery. */
async function inject(plan: FaultPlan, cluster: Cluster, tail: LogTail, copies: readonly string[]): Promise<{ fault: JudgedFault; ended: string | undefined; label: string }> {
  const { kind } = plan;
  if (!isParticipantFault(kind)) {
    const atNs = now();
    let label: string = kind;
    switch (kind) {
      case "store-rollback": {
        // The copy taken at the start of the cycle before this one, or of the one before that
        // (pick): the store forgets the faults and takeovers of one or two cycles.
        const back = Math.min(plan.pick < 0.5 ? 1 : 2, copies.length - 1);
        const copy = copies[copies.length - 1 - back];
        if (copy === undefined) break;
        label = `${kind} to its copy of ${back} cycle${back === 1 ? "" : "s"} before (${copy.slice(copy.lastIndexOf("-") + 1, -".json".length)})`;
        await cluster.rollBackStore(copy, plan.holdMs);
        break;
      }
      case "serve-stop":
        cluster.services[0]!.process.signal("SIGSTOP");
        await sleep(plan.holdMs);
        cluster.services[0]!.process.signal("SIGCONT");
        break;
      case "serve-kill":
        await cluster.killServe();
        await sleep(plan.holdMs);
        await cluster.restartServe();
        break;
      case "store-stop":
        label = `${kind} (${cluster.store!.label}: ${processes(await cluster.store!.freeze())})`;
        await sleep(plan.holdMs);
        cluster.store!.thaw();
        break;
      case "store-kill":
        label = `${kind} (${cluster.store!.label}: ${processes(await cluster.store!.kill())})`;
        await sleep(plan.holdMs);
        await cluster.store!.restart();
        break;
    }
    const healedAtNs = now();
    return { fault: { cycle: plan.cycle, kind, target: undefined, holdMs: nsToMs(healedAtNs - atNs), atNs, healedAtNs }, ended: undefined, label };
  }

  const current = tail.current(FRESH_MS);
  const primary = cluster.participants.find((p) => p.name === current?.participant);
  const target = plan.aimAt === "primary" && primary !== undefined ? primary : choose(cluster.participants.filter((p) => p !== primary), plan.pick);
  const hitPrimary = target === primary;
  const [scope, action] = kind.split("-") as ["group" | "run", "kill" | "term" | "stop"];
  const send = (signal: NodeJS.Signals): void => (scope === "group" ? target.signalGroups(signal) : target.signalRun(signal));
  const atNs = now();
  send(action === "kill" ? "SIGKILL" : action === "term" ? "SIGTERM" : "SIGSTOP");
  await sleep(plan.holdMs);
  if (action === "stop") {
    send("SIGCONT");
  } else {
    await restart(target, cluster);
  }
  const healedAtNs = now();
  const endsWorker = failoverClass(kind) === "crash" || failoverClass(kind) === "graceful";
  return {
    fault: { cycle: plan.cycle, kind, target: target.name, holdMs: nsToMs(healedAtNs - atNs), atNs, healedAtNs },
    ended: hitPrimary && endsWorker && current !== undefined ? writerKey(current) : undefined,
    label: `${kind} of ${target.name} (${hitPrimary ? "primary" : "standby"})`,
  };
}

function processes(count: number): string {
  return `${count} process${count === 1 ? "" : "es"}`;
}

function choose(candidates: readonly Participant[], pick: number): Participant {
  return candidates[Math.min(candidates.length - 1, Math.floor(pick * candidates.length))]!;
}

/** Waits for a killed or stopped `run` to be gone, then starts it again. */
async function restart(participant: Participant, cluster: Cluster): Promise<void> {
  const gone = await Promise.race([participant.exited().then(() => true), sleep(RUN_EXIT_TIMEOUT_MS, undefined, { ref: false }).then(() => false)]);
  if (!gone) {
    cluster.incidents.push({ kind: "stuck", what: `${participant.name}'s run did not exit within ${RUN_EXIT_TIMEOUT_MS} ms of its SIGTERM or SIGKILL` });
    await participant.kill();
  }
  participant.start();
}

/** The resolution of the one clock every line and fault is stamped with. */
function measureClock(): ClockFigures {
  let smallest = Number.POSITIVE_INFINITY;
  const reads: number[] = [];
  let previous = process.hrtime.bigint();
  for (let i = 0; i < 100_000; i += 1) {
    const current = process.hrtime.bigint();
    const step = Number(current - previous);
    if (step > 0 && step < smallest) smallest = step;
    if (i % 100 === 0) reads.push(step);
    previous = current;
  }
  reads.sort((a, b) => a - b);
  return { smallestStepNs: smallest, medianReadNs: reads[Math.floor(reads.length / 2)] ?? 0 };
}
