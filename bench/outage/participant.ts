/**
 * `node participant.js <algorithm> <endpoints> <utype> <intervalMs> <timeoutMs> <log> <name>`:
 * one participant of the seed or the client-go algorithm (bench/compare/algorithms) in the
 * outage benchmark, as a process of its own. It does what `ha-module run` does for ours:
 * while its algorithm says it is primary it works, appending `<ms> <name> <uuid>` to the
 * role's log every 20 ms (work.ts's lines, its uuid standing for the term: each election is
 * a new one), and it stops at its demotion. `endpoints` may list several instances,
 * separated by commas.
 *
 * Writes {"event":"elected"|"demoted","uuid",…,"at":<ms>} lines on stdout.
 */
import { openSync, writeSync } from "node:fs";
import type { AlgorithmContext, AlgorithmName, RunningAlgorithm } from "../compare/algorithms/algorithm.js";
import { runClientGo } from "../compare/algorithms/client-go.js";
import { runSeed } from "../compare/algorithms/seed.js";

const RUNNERS: Partial<Record<AlgorithmName, (context: AlgorithmContext) => RunningAlgorithm>> = { seed: runSeed, "client-go": runClientGo };
const PERIOD_MS = 20;

const [algorithm, endpoint, utype, intervalText, timeoutText, log, name] = process.argv.slice(2);
const intervalMs = Number(intervalText);
const timeoutMs = Number(timeoutText);
const runner = RUNNERS[algorithm as AlgorithmName];
if (runner === undefined || endpoint === undefined || utype === undefined || !(intervalMs > 0) || !(timeoutMs > 2 * intervalMs) || log === undefined || name === undefined) {
  process.stderr.write(`outage participant: expected <seed|client-go> <endpoints> <utype> <intervalMs> <timeoutMs> <log> <name>, got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(2);
}

const fd = openSync(log, "a");
let working: { uuid: string; timer: NodeJS.Timeout } | undefined;
const stopWork = (): void => {
  if (working !== undefined) clearInterval(working.timer);
  working = undefined;
};
const running = runner({
  endpoint,
  utype,
  intervalMs,
  timeoutMs,
  emit: (event) => {
    if (event.event === "following") return;
    process.stdout.write(`${JSON.stringify({ ...event, at: Date.now() })}\n`);
    if (event.event === "demoted") stopWork();
    if (event.event === "elected") {
      stopWork();
      const line = (): void => void writeSync(fd, `${Date.now()} ${name} ${event.uuid}\n`);
      line();
      working = { uuid: event.uuid, timer: setInterval(line, PERIOD_MS) };
    }
  },
});
process.once("SIGTERM", () => {
  stopWork();
  void running.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
