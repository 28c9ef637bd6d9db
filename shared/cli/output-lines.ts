import { stdoutWritable } from "./stdout-guard.js";

/**
 * The two kinds of output of `elect` and `run`: JSON event lines on stdout, for programs,
 * and text notes on stderr, for people. They never mix, so stdout stays machine-readable.
 */

/** Writes one JSON object per line to stdout, stamped with the wall-clock time; dropped once stdout is lost. */
export function printEvent(event: string, fields: Record<string, unknown>): void {
  if (!stdoutWritable()) return;
  process.stdout.write(`${JSON.stringify({ event, ...fields, at: new Date().toISOString() })}\n`);
}

/** One line of text for people on stderr, e.g. `ha-module run: …`. */
export function note(text: string): void {
  if (!process.stderr.destroyed) process.stderr.write(`${text}\n`);
}
