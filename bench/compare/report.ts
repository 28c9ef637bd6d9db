import type { AlgorithmFigures } from "./algorithms-phase.js";
import type { CapacityFigures } from "./capacity.js";
import type { Plan } from "./plan.js";
import type { RatioFigures } from "./service-ratio.js";
import type { Distribution } from "./stats.js";

export interface Results {
  readonly plan: Plan;
  readonly command: string;
  readonly machine: string;
  /** The 1-minute load average when the run started and when it ended (other work on the machine). */
  readonly loadAverage?: { readonly start: number; readonly end: number; readonly cores: number };
  readonly commit: string;
  readonly startedAt: string;
  readonly durationS: number;
  readonly algorithms: AlgorithmFigures[];
  readonly ratio: RatioFigures;
  readonly capacity: CapacityFigures;
}

const ms = (v: number): string => (Number.isFinite(v) ? `${Math.round(v)}` : "–");
const n2 = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : "–");
const pct = (v: number): string => `${(v * 100).toFixed(1)} %`;
const dist = (d: Distribution): string => `${ms(d.min)} / ${ms(d.median)} / ${ms(d.p99)} / ${ms(d.max)} (n = ${d.n})`;

/** The markdown report: figures first, then how they were taken. */
export function renderReport(results: Results): string {
  const { plan, algorithms: a, ratio, capacity } = results;
  const byName = (name: string): AlgorithmFigures | undefined => a.find((f) => f.algorithm === name);
  const ours = byName("ours");
  const lines: string[] = [];
  lines.push(`# Benchmarks: three client algorithms, one service, one run`, "");
  lines.push(`Run ${results.startedAt} on commit \`${results.commit}\`, ${Math.round(results.durationS)} s.`, "");
  lines.push(`- Command: \`${results.command}\``);
  lines.push(`- Machine: ${results.machine}`);
  lines.push(`- Timing: I = ${plan.intervalMs} ms, T = ${plan.timeoutMs} ms${plan.quick ? " (the quick run's shortened timing)" : ""}.`);
  const load = results.loadAverage === undefined ? "" : ` (1-minute load average ${results.loadAverage.start.toFixed(2)} at the start, ${results.loadAverage.end.toFixed(2)} at the end, on ${results.loadAverage.cores} cores)`;
  lines.push(`- Absolute times are this machine's${load}; the ratios are the headline.`, "");
  lines.push(`## Headline`, "");
  if (ours !== undefined) {
    for (const other of a.filter((f) => f.algorithm !== "ours")) {
      lines.push(
        `- vs **${other.algorithm}**: crash failover median ${ms(ours.crash.median)} ms against ${ms(other.crash.median)} ms (×${n2(other.crash.median / ours.crash.median)}), ` +
          `p99 ${ms(ours.crash.p99)} against ${ms(other.crash.p99)} ms; graceful handover ${ms(ours.graceful.median)} against ${ms(other.graceful.median)} ms; ` +
          `HTTP calls per participant per second ${n2(ours.callsPerParticipantPerSecond)} against ${n2(other.callsPerParticipantPerSecond)} (×${n2(other.callsPerParticipantPerSecond / ours.callsPerParticipantPerSecond)}); ` +
          `store operations per participant per second ${n2(ours.storeOpsPerParticipantPerSecond)} against ${n2(other.storeOpsPerParticipantPerSecond)} (×${n2(other.storeOpsPerParticipantPerSecond / ours.storeOpsPerParticipantPerSecond)}).`,
      );
    }
  }
  lines.push(
    `- The service's layer: ${Math.round(ratio.heartbeatsPerSecond)} heartbeats/s through the local host against ${Math.round(ratio.rawUpdatesPerSecond)} raw conditional merges/s straight to the same Azurite at concurrency ${ratio.concurrency}: **ratio ${n2(ratio.ratio)}**.`,
  );
  lines.push(
    `- Capacity at I = ${plan.intervalMs} ms: ${capacity.cleanParticipants} participants (${capacity.cleanParticipants / 2} roles × 2) with zero spurious failovers over ${plan.capacityWindowMs / 1000} s; ` +
      (capacity.firstBreak === undefined ? "no step broke." : `the next step broke first at: ${capacity.firstBreak}.`),
    "",
  );
  lines.push(`## Failover (from the signal to another participant's own "primary")`, "");
  lines.push(`| algorithm | crash, SIGKILL: min / median / p99 / max ms | graceful, SIGTERM: min / median / p99 / max ms |`, `| --- | --- | --- |`);
  for (const f of a) lines.push(`| ${f.algorithm} | ${dist(f.crash)} | ${dist(f.graceful)} |`);
  const unfinished = a.filter((f) => f.unfinishedTrials > 0).map((f) => `${f.algorithm}: ${f.unfinishedTrials}`);
  lines.push("", unfinished.length === 0 ? "Every trial ended with a takeover." : `Trials that did not finish (no primary to kill, or no takeover within 4·T + 10 s): ${unfinished.join(", ")}.`);
  lines.push("", `![crash failover](failover.svg)`, "");
  lines.push(`## Cost on the wire (steady state; counted by proxies in front of the service and of Azurite)`, "");
  lines.push(
    `| algorithm | primary: calls/s | primary: calls per I | store ops per renewal | standby: calls/s | calls per participant per s | store ops per participant per s |`,
    `| --- | --- | --- | --- | --- | --- | --- |`,
  );
  for (const f of a) {
    lines.push(
      `| ${f.algorithm} | ${n2(f.primaryCallsPerSecond)} | ${n2(f.primaryCallsPerInterval)} | ${n2(f.storeOpsPerRenewal)} | ${n2(f.standbyCallsPerSecond)} | ${n2(f.callsPerParticipantPerSecond)} | ${n2(f.storeOpsPerParticipantPerSecond)} |`,
    );
  }
  lines.push(
    "",
    `"Store ops per renewal" is every Azurite operation on the role's partition while the primary was alone, divided by its accepted heartbeats (the seed's GetPrimary reads are part of its renewal).`,
    "",
    `![store operations](store-ops.svg)`,
    "",
  );
  lines.push(`## Under ${plan.loss * 100} % message loss (${plan.lossWindowMs / 1000} s, nobody killed)`, "");
  lines.push(
    `Half of the lost calls never reach the service, half lose the answer after the service applied them.`,
    "",
    `| algorithm | calls lost | spurious leader changes | demotions | time without a primary | time with two acting primaries |`,
    `| --- | --- | --- | --- | --- | --- |`,
  );
  for (const f of a) {
    lines.push(`| ${f.algorithm} | ${f.lossCallsLost} | ${f.lossLeaderChanges} | ${f.lossDemotions} | ${pct(f.lossWithoutPrimaryShare)} | ${pct(f.lossTwoPrimariesShare)} |`);
  }
  lines.push("", `Counted over ${plan.roles} roles per algorithm; the times are shares of role-time, sampled every 20 ms from each participant's own events.`, "");
  lines.push(`## The service: our layer against the raw store`, "");
  lines.push(
    `| concurrency | heartbeats/s via the local host | raw conditional merges/s to Azurite | ratio | service CPU per heartbeat |`,
    `| --- | --- | --- | --- | --- |`,
    `| ${ratio.concurrency} | ${Math.round(ratio.heartbeatsPerSecond)} | ${Math.round(ratio.rawUpdatesPerSecond)} | ${n2(ratio.ratio)} | ${ratio.serviceCpuMsPerHeartbeat === undefined ? "–" : `${n2(ratio.serviceCpuMsPerHeartbeat)} ms`} |`,
    "",
  );
  lines.push(`## Capacity (PrimaryElector fleets, roles × 2 participants, I = ${plan.intervalMs} ms)`, "");
  lines.push(
    `| roles × participants | clean | heartbeats/s | leader changes | demotions | failed calls | p99 round trip ms | without primary | service cores | Azurite cores |`,
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`,
  );
  for (const s of capacity.steps) {
    const demotions = Object.entries(s.demotions).map(([r, k]) => `${k} ${r}`).join(", ") || "0";
    lines.push(
      `| ${s.roles} × 2 | ${s.clean ? "yes" : "**no**"} | ${Math.round(s.heartbeatsPerSecond)} | ${s.leaderChanges} | ${demotions} | ${s.failedCalls} | ${s.p99Ms === null ? "–" : Math.round(s.p99Ms)} | ${pct(s.withoutPrimaryShare)} | ${s.serviceCores === undefined ? "–" : n2(s.serviceCores)} | ${s.storeCores === undefined ? "–" : n2(s.storeCores)} |`,
    );
  }
  lines.push("", `![capacity](capacity.svg)`, "");
  lines.push(`## How it was measured`, "");
  lines.push(
    `- One \`ha-module serve\` process over one Azurite process (the durable store \`npm start\` embeds, its data in a temporary directory). A counting proxy sits in front of each; every participant's endpoint carries its own path prefix, so calls are counted per participant on the wire, and store operations per role by the PartitionKey in Azurite's URLs.`,
    `- Each participant is its own process (bench/compare/participant.ts), killed with real SIGKILL / SIGTERM at a random point of its cycle; a failover ends when another participant of the role reports itself primary.`,
    `- **ours** is \`PrimaryElector\` as shipped. **seed** is the protocol's original client algorithm: every I a GetPrimary, then an UpdateHeartBeat, primacy while now − QueryTime < T − I. **client-go** is k8s.io/client-go/tools/leaderelection scaled to T: LeaseDuration T, RenewDeadline ⅔ T, RetryPeriod I with jitter 1.2, standbys waiting a full LeaseDuration on their own clock, the leader's optimistic update (v1.27+). Each file in bench/compare/algorithms/ cites the behaviour it copies.`,
    `- The service ratio runs a second service straight on Azurite (no proxy), closed-loop holders renewing with their token, against the same number of closed-loop If-Match merges through @azure/data-tables.`,
    `- Capacity runs two fleet processes of PrimaryElectors (one process per participant slot, one elector per role) against that service.`,
    "",
  );
  return lines.join("\n");
}
