/**
 * `node participant.js <algorithm> <endpoint> <utype> <intervalMs> <timeoutMs>`: one
 * participant of one client algorithm, as a process of its own, so the bench can kill it
 * with real signals. SIGKILL is a crash; SIGTERM is what each algorithm does on a graceful
 * stop (ours releases its lease, the other two just exit: see their files).
 *
 * Writes one JSON line per event (algorithms/algorithm.ts ParticipantEvent) on stdout.
 */
import { ALGORITHMS, type AlgorithmContext, type AlgorithmName, type RunningAlgorithm } from "./algorithms/algorithm.js";
import { runClientGo } from "./algorithms/client-go.js";
import { runOurs } from "./algorithms/ours.js";
import { runSeed } from "./algorithms/seed.js";

const [algorithm, endpoint, utype, intervalText, timeoutText] = process.argv.slice(2);
const intervalMs = Number(intervalText);
const timeoutMs = Number(timeoutText);
if (!ALGORITHMS.includes(algorithm as AlgorithmName) || endpoint === undefined || utype === undefined || !(intervalMs > 0) || !(timeoutMs > 2 * intervalMs)) {
  process.stderr.write(`participant: expected <${ALGORITHMS.join("|")}> <endpoint> <utype> <intervalMs> <timeoutMs>, got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(2);
}

let lastFollowing = false;
const context: AlgorithmContext = {
  endpoint,
  utype,
  intervalMs,
  timeoutMs,
  emit: (event) => {
    // "following" is a state, not news: written once per change, not once per poll.
    if (event.event === "following" && lastFollowing) return;
    lastFollowing = event.event === "following";
    process.stdout.write(`${JSON.stringify(event)}\n`);
  },
};
const runners: Record<AlgorithmName, (context: AlgorithmContext) => RunningAlgorithm> = {
  ours: runOurs,
  seed: runSeed,
  "client-go": runClientGo,
};
const running = runners[algorithm as AlgorithmName](context);
process.once("SIGTERM", () => {
  void running.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
