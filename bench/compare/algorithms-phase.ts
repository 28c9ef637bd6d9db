import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { LeaseView } from "../../shared/contract/lease-view.js";
import { ALGORITHMS, type AlgorithmName } from "./algorithms/algorithm.js";
import type { Plan } from "./plan.js";
import { startLineProcess, type LineProcess } from "../helpers/processes.js";
import { distribution, sleep, type Distribution } from "./stats.js";
import type { WireProxy, WireRecord } from "../helpers/wire-proxy.js";

const PARTICIPANT = fileURLToPath(new URL("./participant.js", import.meta.url));

/** One algorithm's figures, all from real processes and counted on the wire. */
export interface AlgorithmFigures {
  readonly algorithm: AlgorithmName;
  /** HTTP calls per second of a primary alone, and per I. */
  readonly primaryCallsPerSecond: number;
  readonly primaryCallsPerInterval: number;
  /** Accepted renewals the primaries made in that window (the denominator below). */
  readonly renewals: number;
  /** HTTP calls per accepted renewal, the primary alone. */
  readonly primaryCallsPerRenewal: number;
  /** Store operations at Azurite per accepted renewal, the primary alone. */
  readonly storeOpsPerRenewal: number;
  /** Of those renewals, the ones alone on the wire (no other call of the participant in flight meanwhile)... */
  readonly loneRenewals: number;
  /**
   * ...and the store operations on the role's partition while each was in flight, per such
   * renewal: what a renewal costs the store. A copy sent while an earlier one is unanswered
   * (a slow answer on a busy machine) can cost a refused conditional write and a read more,
   * which storeOpsPerRenewal counts and this leaves out.
   */
  readonly storeOpsPerLoneRenewal: number;
  /** With a primary and a standby per role: per participant per second. */
  readonly standbyCallsPerSecond: number;
  readonly callsPerParticipantPerSecond: number;
  readonly storeOpsPerParticipantPerSecond: number;
  readonly crash: Distribution;
  readonly graceful: Distribution;
  /** Trials with no primary to kill, or no takeover within 4·T + 10 s (left out of the distributions). */
  readonly unfinishedTrials: number;
  /** Under message loss, over the loss window, summed over the roles. */
  readonly lossLeaderChanges: number;
  readonly lossDemotions: number;
  /** Share of role-time without any participant acting as primary, under loss. */
  readonly lossWithoutPrimaryShare: number;
  /** Share of role-time with two participants acting as primary at once, under loss. */
  readonly lossTwoPrimariesShare: number;
  readonly lossCallsLost: number;
}

interface Participant {
  readonly id: string;
  readonly process: LineProcess;
  primary: boolean;
  following: boolean;
  /** The uuid of its last `elected`: how the service's view names it. */
  uuid: string | undefined;
}

interface Role {
  readonly algorithm: AlgorithmName;
  readonly utype: string;
  readonly participants: Participant[];
  spawned: number;
}

export interface Wire {
  readonly service: WireProxy;
  readonly store: WireProxy;
}

/**
 * Every algorithm at once against the same service and store, the same load and the same
 * loss: `roles` roles each, a primary and a standby per role, each a process. In order:
 * the primary alone (cost of a renewal), primary + standby (steady state), crash trials
 * (SIGKILL), graceful trials (SIGTERM), then message loss.
 */
export async function runAlgorithmPhase(plan: Plan, wire: Wire, log: (line: string) => void): Promise<AlgorithmFigures[]> {
  const { intervalMs: I, timeoutMs: T } = plan;
  const roles: Role[] = ALGORITHMS.flatMap((algorithm) =>
    Array.from({ length: plan.roles }, (_, r) => ({ algorithm, utype: `${algorithm}-r${r}`, participants: [], spawned: 0 })),
  );
  const spawn = (role: Role): Participant => {
    const id = `${role.utype}-${role.spawned++}`;
    const process = startLineProcess(PARTICIPANT, [role.algorithm, `${wire.service.url}/p/${id}/api`, role.utype, String(I), String(T)]);
    const participant: Participant = { id, process, primary: false, following: false, uuid: undefined };
    process.onLine((line) => {
      if (line.event === "elected") {
        participant.primary = true;
        participant.uuid = String(line["uuid"]);
      }
      if (line.event === "demoted") participant.primary = false;
      if (line.event === "following") participant.following = true;
    });
    role.participants.push(participant);
    return participant;
  };
  // Generous: a loaded 2-core machine starts a dozen Node processes slowly.
  const settleMs = 3 * T + 60_000;
  try {
    // The primary alone: what one renewal costs on the wire.
    const leaders = roles.map(spawn);
    await Promise.all(leaders.map((p) => p.process.waitFor((line) => line.event === "elected", settleMs)));
    await sleep(I);
    wire.service.take();
    wire.store.take();
    await sleep(plan.leaderWindowMs);
    const leaderCalls = wire.service.take();
    const leaderOps = wire.store.take();
    log(`primary alone: ${leaderCalls.length} calls, ${leaderOps.length} store operations in ${plan.leaderWindowMs} ms`);

    // A standby per role: steady state.
    const standbys = roles.map(spawn);
    // Settled: following a primary, or primary itself if the first one lost its lease meanwhile.
    await Promise.all(standbys.map((p) => p.process.waitFor((line) => line.event === "following" || line.event === "elected", settleMs)));
    await sleep(I);
    wire.service.take();
    wire.store.take();
    await sleep(plan.steadyWindowMs);
    const steadyCalls = wire.service.take();
    const steadyOps = wire.store.take();
    log(`steady state: ${steadyCalls.length} calls, ${steadyOps.length} store operations in ${plan.steadyWindowMs} ms`);

    const unfinished = new Map<AlgorithmName, number>();
    const crash = await trials(roles, plan.failoverRounds, "SIGKILL", spawn, plan, log, unfinished, wire.service.url);
    const graceful = await trials(roles, plan.gracefulRounds, "SIGTERM", spawn, plan, log, unfinished, wire.service.url);

    // Message loss between the participants and the service; nobody is killed.
    const elected = new Map<AlgorithmName, number>();
    const demoted = new Map<AlgorithmName, number>();
    const listeners = roles.flatMap((role) =>
      role.participants.map((p) => ({ role, p, from: p.process.lines.length })),
    );
    wire.service.take();
    wire.service.setLoss(plan.loss);
    const without = new Map<AlgorithmName, number>();
    const two = new Map<AlgorithmName, number>();
    let samples = 0;
    const started = performance.now();
    while (performance.now() - started < plan.lossWindowMs) {
      await sleep(20);
      samples += 1;
      for (const role of roles) {
        const count = role.participants.filter((p) => p.primary).length;
        if (count === 0) without.set(role.algorithm, (without.get(role.algorithm) ?? 0) + 1);
        if (count > 1) two.set(role.algorithm, (two.get(role.algorithm) ?? 0) + 1);
      }
    }
    wire.service.setLoss(0);
    const lossCalls = wire.service.take();
    for (const { role, p, from } of listeners) {
      for (const line of p.process.lines.slice(from)) {
        if (line.event === "elected") elected.set(role.algorithm, (elected.get(role.algorithm) ?? 0) + 1);
        if (line.event === "demoted") demoted.set(role.algorithm, (demoted.get(role.algorithm) ?? 0) + 1);
      }
    }
    log(`loss ${plan.loss * 100} %: ${lossCalls.filter((c) => c.dropped !== undefined).length} of ${lossCalls.length} calls lost`);

    return ALGORITHMS.map((algorithm) => {
      const mine = (record: WireRecord): boolean => record.participant.startsWith(`${algorithm}-`);
      const ownOps = (record: WireRecord): boolean => record.partition?.startsWith(`${algorithm}-`) ?? false;
      const leaderWindowS = plan.leaderWindowMs / 1000;
      const steadyWindowS = plan.steadyWindowMs / 1000;
      const leaderIds = new Set(leaders.filter((p) => p.id.startsWith(`${algorithm}-`)).map((p) => p.id));
      const standbyIds = new Set(standbys.filter((p) => p.id.startsWith(`${algorithm}-`)).map((p) => p.id));
      const primaryCalls = leaderCalls.filter(mine);
      const renewals = primaryCalls.filter((c) => c.method === "PUT" && c.status === 200).length;
      const lone = loneRenewalCost(primaryCalls, leaderOps);
      const primaryCallsPerSecond = primaryCalls.length / plan.roles / leaderWindowS;
      return {
        algorithm,
        primaryCallsPerSecond,
        primaryCallsPerInterval: (primaryCallsPerSecond * I) / 1000,
        renewals,
        primaryCallsPerRenewal: renewals === 0 ? Number.NaN : primaryCalls.length / renewals,
        storeOpsPerRenewal: renewals === 0 ? Number.NaN : leaderOps.filter(ownOps).length / renewals,
        loneRenewals: lone.renewals,
        storeOpsPerLoneRenewal: lone.renewals === 0 ? Number.NaN : lone.ops / lone.renewals,
        standbyCallsPerSecond: steadyCalls.filter((c) => standbyIds.has(c.participant) && !leaderIds.has(c.participant)).length / plan.roles / steadyWindowS,
        callsPerParticipantPerSecond: steadyCalls.filter(mine).length / (2 * plan.roles) / steadyWindowS,
        storeOpsPerParticipantPerSecond: steadyOps.filter(ownOps).length / (2 * plan.roles) / steadyWindowS,
        crash: distribution(crash.get(algorithm) ?? []),
        graceful: distribution(graceful.get(algorithm) ?? []),
        unfinishedTrials: unfinished.get(algorithm) ?? 0,
        lossLeaderChanges: elected.get(algorithm) ?? 0,
        lossDemotions: demoted.get(algorithm) ?? 0,
        lossWithoutPrimaryShare: (without.get(algorithm) ?? 0) / (samples * plan.roles),
        lossTwoPrimariesShare: (two.get(algorithm) ?? 0) / (samples * plan.roles),
        lossCallsLost: lossCalls.filter((c) => mine(c) && c.dropped !== undefined).length,
      };
    });
  } finally {
    await Promise.all(roles.flatMap((role) => role.participants.map((p) => p.process.kill("SIGKILL"))));
  }
}

/**
 * `rounds` rounds; in each, every role's primary gets `signal` at a random point of its
 * heartbeat cycle, and the time until another participant of the role reports `elected`
 * is one trial. The dead one is replaced by a fresh standby before the next round.
 */
async function trials(
  roles: Role[],
  rounds: number,
  signal: NodeJS.Signals,
  spawn: (role: Role) => Participant,
  plan: Plan,
  log: (line: string) => void,
  unfinished: Map<AlgorithmName, number>,
  serviceUrl: string,
): Promise<Map<AlgorithmName, number[]>> {
  const { intervalMs: I, timeoutMs: T } = plan;
  const times = new Map<AlgorithmName, number[]>();
  for (let round = 0; round < rounds; round += 1) {
    await Promise.all(
      roles.map(async (role) => {
        const alive = (p: Participant): boolean => p.process.child.exitCode === null && p.process.child.signalCode === null;
        const waitUntil = performance.now() + 4 * T + 10_000;
        // The participant the service names as primary: a participant's own belief may be stale.
        const holder = async (): Promise<Participant | undefined> => {
          try {
            const view = (await (await fetch(`${serviceUrl}/api/primary/${role.utype}`, { signal: AbortSignal.timeout(5000) })).json()) as LeaseView;
            return role.participants.find((p) => p.primary && alive(p) && p.uuid === view.primary?.uuid);
          } catch {
            return undefined;
          }
        };
        let primary = await holder();
        while (primary === undefined && performance.now() < waitUntil) {
          await sleep(200);
          primary = await holder();
        }
        if (primary === undefined) {
          log(`${role.utype}: no primary to ${signal} in round ${round + 1}; trial skipped`);
          unfinished.set(role.algorithm, (unfinished.get(role.algorithm) ?? 0) + 1);
          return;
        }
        const others = role.participants.filter((p) => p !== primary && alive(p));
        await sleep(Math.random() * I);
        const signalledAt = performance.now();
        const killed = primary.process.kill(signal);
        primary.primary = false; // it is gone, whatever it last said
        const elected = await Promise.race(
          others.map((p) => p.process.waitFor((line) => line.event === "elected" && line.arrivedAt > signalledAt, 4 * T + 10_000)),
        ).catch(() => undefined);
        await killed;
        role.participants.splice(role.participants.indexOf(primary), 1);
        if (elected === undefined) {
          log(`${role.utype}: nobody took over within ${4 * T + 10_000} ms after ${signal} in round ${round + 1}`);
          unfinished.set(role.algorithm, (unfinished.get(role.algorithm) ?? 0) + 1);
        } else {
          const list = times.get(role.algorithm) ?? [];
          list.push(elected.arrivedAt - signalledAt);
          times.set(role.algorithm, list);
        }
        const replacement = spawn(role);
        await replacement.process.waitFor((line) => line.event === "following" || line.event === "elected", 4 * T + 10_000).catch(() => undefined);
      }),
    );
    log(`${signal} round ${round + 1}/${rounds} done`);
  }
  return times;
}

/** When a call's answer came back; a call never answered is in flight for ever. */
function endOf(call: WireRecord): number {
  return call.durationMs === undefined ? Number.POSITIVE_INFINITY : call.at + call.durationMs;
}

/**
 * The accepted renewals (PUT, 200) among `calls` that were alone on the wire, with no other
 * call of the same participant in flight at any moment of theirs, and the store operations
 * on their role's partition (the participant's id is `<utype>-<n>`) made while they were in
 * flight. Only primaries alone are measured, so every operation on the partition then is
 * the renewal's own.
 */
export function loneRenewalCost(calls: readonly WireRecord[], ops: readonly WireRecord[]): { renewals: number; ops: number } {
  let renewals = 0;
  let counted = 0;
  for (const call of calls) {
    if (call.method !== "PUT" || call.status !== 200) continue;
    const end = endOf(call);
    const raced = calls.some((other) => other !== call && other.participant === call.participant && other.at <= end && endOf(other) >= call.at);
    if (raced) continue;
    const partition = call.participant.replace(/-\d+$/, "");
    renewals += 1;
    counted += ops.filter((op) => op.partition === partition && op.at >= call.at && op.at <= end).length;
  }
  return { renewals, ops: counted };
}
