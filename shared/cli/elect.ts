import { onlyUtype, parseCommandLine } from "./client-flags.js";
import { createCliElector, printElectorEvents, untilSignal } from "./event-lines.js";

/**
 * `ha-module elect <utype> [--address A]`: joins the election and prints its events as
 * JSON lines until SIGTERM or SIGINT; then stops as PrimaryElector.stop() does (demoted
 * "stopped", then release, so a standby takes over within about one I) and exits 0.
 */
export async function electCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals, client } = parseCommandLine(args, { address: { type: "string" } }, env);
  const utype = onlyUtype("elect", positionals);
  const elector = createCliElector(utype, client, values["address"]);
  printElectorEvents(elector, "elect");
  const signalled = untilSignal();
  elector.start();
  await signalled;
  await elector.stop();
  return 0;
}
