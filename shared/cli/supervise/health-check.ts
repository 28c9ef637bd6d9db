import type { ElectorClock, TimerHandle } from "../../sdk/loop/elector-clock.js";
import type { CommandExit, StartRequest } from "./child-supervisor.js";
import type { CommandSlot } from "./lease-bound-command.js";

/** `--health-interval`, `--health-timeout`, `--health-retries`, `--health-start-period`, as Docker's HEALTHCHECK has them. */
export interface HealthSettings {
  /** Between the end of one check and the start of the next, and from the command's start to the first. */
  readonly intervalMs: number;
  /** A check still running after this long is killed (its process group) and counts as failed. */
  readonly timeoutMs: number;
  /** Consecutive failures that make the command unhealthy. */
  readonly retries: number;
  /** From the command's start: failures of checks started in it do not count, unless a check passed already. */
  readonly startPeriodMs: number;
}

/** One run of the check, once it is gone. */
export interface ProbeResult {
  /** Its exit code: 0 is healthy. 128 + the signal's number when a signal ended it. */
  readonly exitCode: number;
  /** What it wrote (stdout and stderr together), bounded by the probe. */
  readonly output: string;
}

/** Starts one run of the check; aborting `signal` kills it. Resolves once it is gone. */
export type Probe = (signal: AbortSignal) => Promise<ProbeResult>;

/** What one check found, as counted. */
export interface CheckOutcome {
  readonly healthy: boolean;
  /** The check's exit code; undefined when it was killed at the timeout. */
  readonly exitCode: number | undefined;
  readonly timedOut: boolean;
  /** What it wrote (until it was killed, when it timed out), trimmed. */
  readonly output: string;
  /** Consecutive failures counted so far (0 after a pass). */
  readonly failures: number;
  /** False for a failure inside the start period (before any pass): it is not counted. */
  readonly counted: boolean;
}

/** Told about each check of one watch; `unhealthy` once `retries` consecutive failures are counted, after which that watch checks no more. */
export interface HealthListener {
  checked?(outcome: CheckOutcome): void;
  unhealthy(outcome: CheckOutcome): void;
}

interface Watch {
  readonly probe: Probe;
  readonly listener: HealthListener;
  /** When the command started: the start period counts from here. */
  readonly since: number;
  failures: number;
  passed: boolean;
  timer: TimerHandle | undefined;
  /** Kills the check this watch runs now. */
  abort: AbortController | undefined;
}

/**
 * The health check of `ha-module run --health-cmd`, on an injected clock, with Docker's
 * HEALTHCHECK rules: the first check `interval` after the command started, the next one
 * `interval` after the previous one ended; a check that runs past `timeout` is killed and
 * counts as a failure; exit 0 passes; a pass resets the count; failures of checks that
 * started inside the start period are not counted unless one passed already; `retries`
 * consecutive counted failures make the command unhealthy, and that watch ends.
 *
 * One watch at a time, for the command that runs now (begin()), ended at once by end():
 * its timers cleared and a check still running killed. A check never overlaps another,
 * not even one of an earlier watch that is still dying.
 */
export class HealthMonitor {
  readonly #settings: HealthSettings;
  readonly #clock: ElectorClock;
  #watch: Watch | undefined;
  /** The check running now (of any watch), until it is gone. */
  #inFlight: Promise<unknown> | undefined;

  constructor(settings: HealthSettings, clock: ElectorClock) {
    this.#settings = settings;
    this.#clock = clock;
  }

  /** Whether a watch is on (begun, not ended, not found unhealthy). */
  get watching(): boolean {
    return this.#watch !== undefined;
  }

  /** The command started now: checks it with `probe` until end() or until it is found unhealthy. */
  begin(probe: Probe, listener: HealthListener): void {
    this.end();
    const watch: Watch = { probe, listener, since: this.#clock.now(), failures: 0, passed: false, timer: undefined, abort: undefined };
    this.#watch = watch;
    this.#next(watch);
  }

  /** The command's term is over (or the command is being stopped): no more checks, and the one running now is killed. */
  end(): void {
    const watch = this.#watch;
    if (watch === undefined) return;
    this.#watch = undefined;
    if (watch.timer !== undefined) this.#clock.clearTimeout(watch.timer);
    watch.abort?.abort();
  }

  /** Resolves once no check is running. */
  async whenIdle(): Promise<void> {
    while (this.#inFlight !== undefined) await this.#inFlight;
  }

  #next(watch: Watch): void {
    watch.timer = this.#clock.setTimeout(() => void this.#check(watch), this.#settings.intervalMs);
  }

  async #check(watch: Watch): Promise<void> {
    watch.timer = undefined;
    await this.whenIdle();
    if (this.#watch !== watch) return;
    const { timeoutMs } = this.#settings;
    const startedAt = this.#clock.now();
    const abort = new AbortController();
    watch.abort = abort;
    let timedOut = false;
    const timer = this.#clock.setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, timeoutMs);
    const running = watch.probe(abort.signal).catch((error: unknown): ProbeResult => ({ exitCode: 127, output: error instanceof Error ? error.message : String(error) }));
    this.#inFlight = running;
    const result = await running;
    this.#clock.clearTimeout(timer);
    if (this.#inFlight === running) this.#inFlight = undefined;
    watch.abort = undefined;
    // Ended meanwhile: the command's term is over, and what the check says belongs to nobody.
    if (this.#watch !== watch) return;
    this.#judge(watch, startedAt, result, timedOut);
  }

  /** Docker's rule: a pass resets the count; a failure counts unless the check started in the start period before any pass. */
  #judge(watch: Watch, startedAt: number, result: ProbeResult, timedOut: boolean): void {
    const healthy = !timedOut && result.exitCode === 0;
    const counted = !healthy && (watch.passed || startedAt - watch.since >= this.#settings.startPeriodMs);
    if (healthy) {
      watch.passed = true;
      watch.failures = 0;
    } else if (counted) {
      watch.failures += 1;
    }
    const outcome: CheckOutcome = {
      healthy,
      exitCode: timedOut ? undefined : result.exitCode,
      timedOut,
      output: result.output.trim(),
      failures: watch.failures,
      counted,
    };
    watch.listener.checked?.(outcome);
    if (watch.failures >= this.#settings.retries) {
      if (this.#watch === watch) this.#watch = undefined;
      watch.listener.unhealthy(outcome);
      return;
    }
    if (this.#watch === watch) this.#next(watch);
  }
}

/**
 * Wraps the command slot of `run` (a ChildSupervisor) so that the health monitor watches
 * exactly while a command runs: begun when one starts, ended as soon as it is asked to stop
 * (for whatever reason) or its group is gone. `watch` says how to check the command of a
 * term (its probe, with the term's environment) and whom to tell.
 */
export function healthChecked(
  slot: (onExit: (exit: CommandExit) => void) => CommandSlot,
  monitor: HealthMonitor,
  watch: (request: StartRequest) => { readonly probe: Probe; readonly listener: HealthListener },
): (onExit: (exit: CommandExit) => void) => CommandSlot {
  return (onExit) => {
    const inner = slot((exit) => {
      monitor.end();
      onExit(exit);
    });
    return {
      get state() {
        return inner.state;
      },
      get term() {
        return inner.term;
      },
      start(request) {
        inner.start(request);
        if (inner.state !== "running") return;
        const { probe, listener } = watch(request);
        monitor.begin(probe, listener);
      },
      keepUntil: (killBy) => inner.keepUntil(killBy),
      stop(killAt, why) {
        monitor.end();
        inner.stop(killAt, why);
      },
      whenIdle: () => inner.whenIdle(),
    };
  };
}
