import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CLI_PATH, WORKER_PATH } from "./paths.js";
import { cleanEnv, isLiveChildOf, sendSignal, shellQuote, startLogged, type LoggedProcess } from "./processes.js";

export interface ParticipantOptions {
  /** p0, p1, … */
  readonly name: string;
  readonly utype: string;
  readonly endpoint: string;
  readonly logPath: string;
  readonly outDir: string;
  /**
   * How the worker is started: `direct` (`run … -- node worker.js`, the worker leads its
   * group), `shell` (`sh -c "node worker.js …; true"`: the shell leads the group and the
   * worker is a member), or `escaped` — a planted bug: `sh -c "setsid node worker.js …;
   * true"`, a worker that leaves its group and so escapes `run`'s signals and its watchdog —
   * or `respawning` — a planted bug: `sh -c "node worker.js … 3 <ms>; node worker.js …"`,
   * a first worker that ends after a while and a second one that writes on under the same
   * HA_EPOCH, as a supervisor restarting its command within one term would.
   */
  readonly launch: "direct" | "shell" | "escaped" | "respawning";
  /**
   * The priority each incarnation of `run` competes with (`--priority`, with a hold-down of
   * `preemptAfterMs`: docs/protocol.md#priorities-and-preemption), by incarnation number
   * (1, 2, …): mixed into the cycles, so that failovers go to the highest standby and a
   * restarted preferred participant takes the role over by preemption, among the faults.
   * Absent: no priority (every participant equal).
   */
  readonly priorityOf?: (incarnation: number) => number;
  readonly preemptAfterMs?: number;
  /** `run` exited when the harness had not ended it. */
  readonly onUnexpectedExit: (what: string, exit: { code: number | null; signal: NodeJS.Signals | null }, tail: string) => void;
}

/** With `respawning`, how long the first worker of each command writes before the second takes over. */
const RESPAWN_AFTER_MS = 600;

/** One participant: a real `ha-module run <utype> -- <worker>` process, started again after it is killed. */
export class Participant {
  readonly name: string;
  /** Every watchdog `run` reported (pid → the process group it guards), to check none outlives its run. */
  readonly watchdogs = new Map<number, number>();
  #run: LoggedProcess | undefined;
  #incarnation = 0;
  /** The command's process group as `run` last reported it (started, not yet exited). */
  #commandPgid: number | undefined;
  /** Resolved by this incarnation's first event: it has learned I and T and competes. */
  #competing: { promise: Promise<void>; resolve: () => void } = deferred();

  constructor(private readonly options: ParticipantOptions) {
    this.name = options.name;
  }

  get running(): boolean {
    return this.#run?.running() ?? false;
  }

  get runPid(): number | undefined {
    return this.#run?.pid;
  }

  start(): void {
    if (this.running) throw new Error(`${this.name}: run is still running`);
    const { name, utype, endpoint, logPath, outDir, launch } = this.options;
    this.#incarnation += 1;
    this.#commandPgid = undefined;
    this.#competing = deferred();
    const worker = [process.execPath, WORKER_PATH, logPath, name];
    const shell = worker.map(shellQuote).join(" ");
    const command =
      launch === "direct"
        ? worker
        : launch === "respawning"
          ? ["sh", "-c", `${shell} 3 ${RESPAWN_AFTER_MS}; ${shell}`]
          : ["sh", "-c", `${launch === "escaped" ? "setsid " : ""}${shell}; true`];
    // run leads a process group of its own, so that "the participant's group" can be signalled apart from the harness.
    const priority = this.options.priorityOf?.(this.#incarnation);
    const ranked = priority === undefined ? [] : ["--priority", String(priority), "--preempt-after", `${this.options.preemptAfterMs ?? 30_000}ms`];
    this.#run = startLogged(`${name} run #${this.#incarnation}`, process.execPath, [CLI_PATH, "run", utype, "--endpoint", endpoint, ...ranked, "--", ...command], {
      env: cleanEnv({}),
      outFile: join(outDir, `${name}.out`),
      detached: true,
      onLine: (line) => this.#event(line),
      onUnexpectedExit: (run, exit) => this.options.onUnexpectedExit(run.name, exit, run.tail()),
    });
  }

  #event(line: string): void {
    let event: { event?: string; pid?: unknown; watchdog?: unknown };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      return;
    }
    this.#competing.resolve();
    if (event.event === "started" && typeof event.pid === "number") {
      this.#commandPgid = event.pid;
      if (typeof event.watchdog === "number") this.watchdogs.set(event.watchdog, event.pid);
    }
    if (event.event === "exited" && event.pid === this.#commandPgid) this.#commandPgid = undefined;
  }

  /** Resolves true once this incarnation of run competes (its first event line), false after `timeoutMs` or if it exits first. */
  async competing(timeoutMs: number): Promise<boolean> {
    const run = this.#run;
    if (run === undefined) return false;
    return Promise.race([this.#competing.promise.then(() => true), run.exited.then(() => false), delay(timeoutMs).then(() => false)]);
  }

  /** Signals `run` alone. */
  signalRun(signal: NodeJS.Signals): void {
    if (ends(signal)) this.#run?.expectExit();
    this.#run?.signal(signal);
  }

  /**
   * Signals the whole participant, as a container stop or a VM freeze would: `run`'s
   * process group and its command's group (whose leader must still be run's child). Not
   * the watchdog: `run` keeps it in a session of its own.
   *
   * SIGKILL is made atomic, as a container kill is: both groups are stopped first. Two
   * kill(2) calls are not atomic on a busy machine, and a `run` that outlived its command
   * by a few milliseconds would see it die, release the lease and make the "crash" a
   * graceful hand-over.
   */
  signalGroups(signal: NodeJS.Signals): void {
    const run = this.#run;
    if (run === undefined || !run.running()) return;
    if (ends(signal)) run.expectExit();
    const pgid = this.#commandPgid;
    const groups = pgid !== undefined && isLiveChildOf(pgid, run.pid) ? [-run.pid, -pgid] : [-run.pid];
    if (signal === "SIGKILL") for (const group of groups) sendSignal(group, "SIGSTOP");
    for (const group of groups) sendSignal(group, signal);
  }

  /** SIGTERM to run (a graceful stop); SIGKILL to its groups if it has not exited after `timeoutMs`. Resolves true if it stopped in time. */
  async stop(timeoutMs: number): Promise<boolean> {
    const run = this.#run;
    if (run === undefined || !run.running()) return true;
    this.signalGroups("SIGCONT");
    run.expectExit();
    run.signal("SIGTERM");
    const inTime = await Promise.race([run.exited.then(() => true), delay(timeoutMs).then(() => false)]);
    if (!inTime) await this.kill();
    return inTime;
  }

  /** SIGCONT then SIGKILL to both groups, for cleanup. */
  async kill(): Promise<void> {
    const run = this.#run;
    if (run === undefined || !run.running()) return;
    this.signalGroups("SIGCONT");
    this.signalGroups("SIGKILL");
    await run.exited;
  }

  /** Resolves once this incarnation of run has exited. */
  async exited(): Promise<void> {
    await this.#run?.exited;
  }

  tail(): string {
    return this.#run?.tail() ?? "";
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function ends(signal: NodeJS.Signals): boolean {
  return signal === "SIGKILL" || signal === "SIGTERM";
}

/** A timeout in a race: unref'd, so a lost race never keeps the harness alive. */
function delay(ms: number): Promise<void> {
  return sleep(ms, undefined, { ref: false });
}
