import { MemberSession } from "../sdk/index.js";
import { asUsageError } from "./cli-elector.js";
import { parseCommandLine } from "./client-flags.js";
import { printSessionEvents } from "./member-event-lines.js";
import { note } from "./output-lines.js";
import { guardOutput, stdoutLost } from "./stdout-guard.js";
import { untilSignal } from "./stop-signals.js";
import { UsageError } from "./usage.js";

/**
 * `ha-module join <group> --member NAME [--address A]`: a member session that heartbeats
 * every I and prints its joined/lost events as JSON lines, until SIGTERM or SIGINT; then it
 * says goodbye (the session is leaving at once for every watcher) and exits 0. If stdout's
 * reader goes away it says goodbye too and exits 1, as `elect` does.
 */
export async function joinCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals, client } = parseCommandLine(args, { member: { type: "string" }, address: { type: "string" } }, env);
  if (positionals.length !== 1 || positionals[0] === "") {
    throw new UsageError(`join takes exactly one group (got ${positionals.length === 0 ? "none" : positionals.map((p) => JSON.stringify(p)).join(" ")}).`);
  }
  const group = positionals[0]!;
  const member = values["member"];
  if (typeof member !== "string") throw new UsageError("join needs --member NAME: this participant's stable name in the group.");
  const address = values["address"];
  const session = asUsageError(
    () =>
      new MemberSession({
        group,
        member,
        endpoint: client.endpoint,
        ...(client.apiKey === undefined ? {} : { apiKey: client.apiKey }),
        ...(typeof address === "string" ? { address } : {}),
      }),
  );
  guardOutput();
  printSessionEvents(session, "join");
  const signalled = untilSignal();
  session.start();
  const exitCode = await Promise.race([
    signalled.then(() => 0),
    stdoutLost().then((error) => {
      note(`ha-module join: stdout is closed (${error.message}); saying goodbye.`);
      return 1;
    }),
  ]);
  await session.stop();
  return exitCode;
}
