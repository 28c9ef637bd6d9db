import { setTimeout as sleep } from "node:timers/promises";
import type { Leftover } from "./judge.js";
import type { LogLine } from "./log-line.js";
import type { Participant } from "./participant.js";
import { commandLineOf, isRunning, sendSignal } from "./processes.js";
import { WORKER_PATH } from "./paths.js";

/** How long a worker may take to die after its run (the watchdog's latency, on a loaded machine). */
const GRACE_MS = 3000;

interface Suspect extends Leftover {
  /** Still this process: its command line is the one the harness's run started. */
  readonly ours: () => boolean;
}

/**
 * Once every `run` has exited: the workers of the log and the watchdogs `run` reported
 * that are still running after a few seconds. Each is identified by its command line as
 * well as its pid (a pid may have been reused by now), and SIGKILLed: the harness leaves
 * nothing behind.
 */
export async function findLeftovers(lines: readonly LogLine[], logPath: string, participants: readonly Participant[]): Promise<Leftover[]> {
  const suspects: Suspect[] = [];
  const workers = new Map<number, LogLine>();
  for (const line of lines) workers.set(line.pid, line);
  for (const [pid, line] of workers) {
    suspects.push({
      pid,
      what: `${line.participant}'s worker (epoch ${line.epoch})`,
      ours: () => {
        const argv = commandLineOf(pid);
        return argv !== undefined && argv.includes(WORKER_PATH) && argv.includes(logPath);
      },
    });
  }
  for (const participant of participants) {
    for (const [pid, pgid] of participant.watchdogs) {
      suspects.push({
        pid,
        what: `${participant.name}'s watchdog of process group ${pgid}`,
        ours: () => {
          const argv = commandLineOf(pid);
          return argv !== undefined && (argv[1] ?? "").endsWith("watchdog.js") && argv[2] === String(pgid);
        },
      });
    }
  }
  const alive = (): Suspect[] => suspects.filter((s) => isRunning(s.pid) && s.ours());
  const deadline = performance.now() + GRACE_MS;
  while (alive().length > 0 && performance.now() < deadline) await sleep(50);
  const left = alive();
  for (const suspect of left) sendSignal(suspect.pid, "SIGKILL");
  return left.map(({ pid, what }) => ({ pid, what }));
}
