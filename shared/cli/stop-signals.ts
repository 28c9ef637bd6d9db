/**
 * Resolves on the first SIGTERM or SIGINT. Only the first is handled: a second one finds
 * no handler and ends the process at once, the operator's way to say "now" (under `run`
 * the watchdog then SIGKILLs the command's group).
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
