/** What a participant tells the bench, one JSON line each on stdout. */
export type ParticipantEvent =
  | { readonly event: "elected"; readonly uuid: string }
  | { readonly event: "demoted"; readonly uuid: string; readonly reason: string }
  /** It saw another live primary: it is a standby now (the bench waits for this before a trial). */
  | { readonly event: "following" };

export interface AlgorithmContext {
  readonly endpoint: string;
  readonly utype: string;
  /** The service's I and T; each algorithm derives its own periods from them. */
  readonly intervalMs: number;
  readonly timeoutMs: number;
  emit(event: ParticipantEvent): void;
}

/** One client algorithm, running: `stop()` is what it does on SIGTERM. */
export interface RunningAlgorithm {
  stop(): Promise<void>;
}

export type AlgorithmName = "ours" | "seed" | "client-go";
export const ALGORITHMS: readonly AlgorithmName[] = ["ours", "seed", "client-go"];

/** A call's timeout for AbortSignal.timeout, which refuses a non-integer. */
export function wholeMs(ms: number): number {
  return Math.max(1, Math.round(ms));
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, wholeMs(ms));
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
