/**
 * What `elect`, `run`, `join` and `members --watch` do when the reader of stdout goes away
 * (`… | head -1`, a log shipper that dies): the next line fails with EPIPE, which Node would
 * throw from the stream and crash the process, leaving the lease to expire and a supervised
 * command orphaned. Instead the loss is reported once through `stdoutLost()`, later lines
 * are dropped, and the command decides (all stop as on SIGTERM, exitWhenStdoutLost: the
 * events are their product, so working on without a reader would hold a lease for nobody).
 */

import { EXIT } from "./exit-codes.js";

let lost: Error | undefined;
let guarded = false;
const lostListeners = new Set<(error: Error) => void>();

/**
 * Handles write errors of stdout and stderr from now on; the commands above call it first.
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

/** How a command that lives for its output ends when stdout is lost: it says so, and what it does now (`doing`), and exits 1. */
export function exitWhenStdoutLost(say: (text: string) => void, doing: string): Promise<number> {
  return stdoutLost().then((error) => {
    say(`stdout is closed (${error.message}); ${doing}.`);
    return EXIT.failure;
  });
}

/** False once stdout failed or was closed: later lines are dropped, not written. */
export function stdoutWritable(): boolean {
  return lost === undefined && !process.stdout.destroyed;
}
