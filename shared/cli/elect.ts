import { createCliElector } from "./cli-elector.js";
import { onlyUtype, parseCommandLine } from "./client-flags.js";
import { printElectorEvents } from "./elector-event-lines.js";
import { note } from "./output-lines.js";
import { guardOutput, stdoutLost } from "./stdout-guard.js";
import { untilSignal } from "./stop-signals.js";

/**
 * `ha-module elect <utype> [--address A]`: joins the election and prints its events as
 * JSON lines until SIGTERM or SIGINT; then stops as PrimaryElector.stop() does (demoted
 * "stopped", then release, so a standby takes over within about one I) and exits 0.
 * If stdout's reader goes away (EPIPE), it stops the same way and exits 1: its events are
 * all it is for, and holding a lease that nobody acts on would keep a standby out.
 */
export async function electCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals, client } = parseCommandLine(args, { address: { type: "string" } }, env);
  const utype = onlyUtype("elect", positionals);
  const elector = createCliElector(utype, client, values["address"]);
  guardOutput();
  printElectorEvents(elector, "elect");
  const signalled = untilSignal();
  elector.start();
  const exitCode = await Promise.race([
    signalled.then(() => 0),
    stdoutLost().then((error) => {
      note(`ha-module elect: stdout is closed (${error.message}); leaving the election and releasing the lease.`);
      return 1;
    }),
  ]);
  await elector.stop();
  return exitCode;
}
