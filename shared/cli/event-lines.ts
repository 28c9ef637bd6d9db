import type { PrimaryElector } from "../sdk/primary-elector.js";

/**
 * The JSON event lines of `elect` and `run` on stdout, and their text notes on stderr.
 *
 * When the reader of stdout goes away (`… | head -1`, a log shipper that dies), the next
 * line fails with EPIPE. Node would throw that from the stream and crash the process,
 * leaving the lease to expire and a supervised command orphaned. Instead the loss is
 * reported once through `stdoutLost()`, later lines are dropped, and the command decides
 * (both stop as on SIGTERM: the events are their product, so working on without a reader
 * would hold a lease for nobody).
 */

let lost: Error | undefined;
let guarded = false;
const lostListeners = new Set<(error: Error) => void>();

/**
 * Handles write errors of stdout and stderr from now on; `elect` and `run` call it first.
 * A closed stderr is nobody's business but its reader's: notes to it are best effort.
 */
export function guardOutput(): void {
  if (guarded) return;
  guarded = true;
  process.stdout.on("error", (error: Error) => {
    if (lost !== undefined) return;
    lost = error;
    for (const listener of lostListeners) listener(error);
  });
  process.stderr.on("error", () => undefined);
}

/** Resolves with the write error the first time stdout cannot be written (see guardOutput). */
export function stdoutLost(): Promise<Error> {
  return new Promise((resolve) => {
    if (lost !== undefined) resolve(lost);
    else lostListeners.add(resolve);
  });
}

/** Writes one JSON object per line to stdout, stamped with the wall-clock time; dropped once stdout is lost. */
export function printEvent(event: string, fields: Record<string, unknown>): void {
  if (lost !== undefined || process.stdout.destroyed) return;
  process.stdout.write(`${JSON.stringify({ event, ...fields, at: new Date().toISOString() })}\n`);
}

/** One line of text for people on stderr, e.g. `ha-module run: …`. */
export function note(text: string): void {
  if (!process.stderr.destroyed) process.stderr.write(`${text}\n`);
}

/**
 * The elector's events as JSON lines on stdout:
 *   {"event":"elected","utype":…,"uuid":…,"epoch":…,"at":"<ISO>"}
 *   {"event":"demoted","utype":…,"uuid":…,"epoch":…,"reason":…,"at":…}
 *   {"event":"primaryChanged","utype":…,"primary":{…}|null,"at":…}
 * Non-fatal errors go to stderr as text, so that stdout stays machine-readable.
 */
export function printElectorEvents(elector: PrimaryElector, command: string): void {
  const utype = elector.utype;
  elector.on("elected", ({ uuid, epoch }) => printEvent("elected", { utype, uuid, epoch }));
  elector.on("demoted", ({ uuid, epoch, reason }) => printEvent("demoted", { utype, uuid, epoch, reason }));
  elector.on("primaryChanged", ({ primary }) => printEvent("primaryChanged", { utype, primary }));
  elector.on("error", (error) => note(`ha-module ${command}: ${error.message}`));
}

// primary.ts takes this from here; it lives with the elector's construction now.
export { asUsageError } from "./cli-elector.js";
