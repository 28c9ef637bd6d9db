/**
 * Resolves on the first SIGTERM or SIGINT.
 *
 * Without `onRepeat`, only the first is handled: a second one finds no handler and ends the
 * process at once, the operator's way to say "now". A command that may hold a lease passes
 * `onRepeat` instead: every later signal calls it and the process goes on to release the
 * lease (its own stop is bounded), since a process that died holding it would leave the
 * role to a dead uuid for about T. `onRepeat` is where the command hurries what it can.
 */
export function untilSignal(onRepeat?: (signal: NodeJS.Signals) => void): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let first = true;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (!first) {
        onRepeat?.(signal);
        return;
      }
      first = false;
      if (onRepeat === undefined) {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
