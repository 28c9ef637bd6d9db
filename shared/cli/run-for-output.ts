import { exitWhenUnfixable, untilUnfixable, type ErrorSource } from "./call-failures.js";
import { EXIT } from "./exit-codes.js";
import { exitWhenStdoutLost, guardOutput } from "./stdout-guard.js";
import { untilSignal } from "./supervise/stop-signals.js";

/** An SDK loop that a command runs for its output lines: a MemberSession (`join`) or a MembersWatcher (`members --watch`). */
export interface OutputLoop extends ErrorSource {
  start(): unknown;
  stop(): Promise<void>;
}

export interface RunForOutputOptions {
  /** The service's URL, for the hints of failed calls. */
  readonly endpoint: string;
  /** Prints a note on stderr, prefixed with the command. */
  readonly say: (text: string) => void;
  /** Registers the handlers that print the loop's events on stdout. */
  readonly print: () => void;
  /** What the command does when stdout's reader is gone, e.g. "saying goodbye". */
  readonly onStdoutLost: string;
}

/**
 * Starts `loop` and runs it until SIGTERM or SIGINT (exit 0), until stdout's reader goes
 * away (1: its lines are all it is for), or until a failed call that no retry can fix (1,
 * with a hint; the others are noted and retried), then stops it.
 */
export async function runForOutput(loop: OutputLoop, options: RunForOutputOptions): Promise<number> {
  guardOutput();
  const unfixable = untilUnfixable(loop, options.endpoint, options.say);
  options.print();
  const signalled = untilSignal();
  loop.start();
  const exitCode = await Promise.race([signalled.then(() => EXIT.ok), exitWhenStdoutLost(options.say, options.onStdoutLost), exitWhenUnfixable(unfixable, options.say)]);
  await loop.stop();
  return exitCode;
}
