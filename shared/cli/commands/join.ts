import { MemberSession } from "../../sdk/index.js";
import { asUsageError } from "../cli-elector.js";
import { CLIENT_OPTIONS, clientOf, clientSettings } from "../client-flags.js";
import type { CommandLine, CommandSpec } from "../command-spec.js";
import { printSessionEvents } from "../member-event-lines.js";
import { note } from "../output-lines.js";
import { runForOutput } from "../run-for-output.js";
import { UsageError } from "../usage-error.js";

export const joinSpec: CommandSpec = {
  name: "join",
  synopsis: "<group> --member NAME [options]",
  summary: "be a member of <group> until Ctrl-C; one JSON line per event",
  details: [
    "Heartbeats a member session every I (a new session at every start) and prints one JSON line",
    "per event:",
    '  {"event":"joined","group":…,"member":…,"session":…,"address":…,"at":"<ISO time>"}',
    '  {"event":"lost",…,"reason":"replaced|ended|expired",…} (a new session joins after a loss)',
    "On SIGTERM or SIGINT it says goodbye (the member is leaving at once for every watcher) and",
    "exits 0. A wrong key (401) or endpoint (404) exits 1 at once, with a hint.",
  ].join("\n"),
  options: [
    { name: "member", value: "NAME", help: "this participant's stable name in the group (required)" },
    { name: "address", value: "A", help: "where this member can be reached, shown to everyone who lists the group" },
    ...CLIENT_OPTIONS,
  ],
};

/**
 * `ha-module join <group> --member NAME [--address A]`: a member session that heartbeats
 * every I and prints its joined/lost events as JSON lines, until SIGTERM or SIGINT; then it
 * says goodbye (the session is leaving at once for every watcher) and exits 0. If stdout's
 * reader goes away it says goodbye too and exits 1, as `elect` does.
 */
export async function joinCommand({ values, positionals }: CommandLine, env: NodeJS.ProcessEnv): Promise<number> {
  if (positionals.length !== 1 || positionals[0] === "") {
    throw new UsageError(`join takes exactly one group (got ${positionals.length === 0 ? "none" : positionals.map((p) => JSON.stringify(p)).join(" ")}).`);
  }
  const group = positionals[0]!;
  const member = values["member"];
  if (typeof member !== "string") throw new UsageError("join needs --member NAME: this participant's stable name in the group.");
  const address = values["address"];
  const client = clientSettings(values, env);
  const session = asUsageError(
    () =>
      new MemberSession({
        group,
        member,
        transport: clientOf(client),
        ...(typeof address === "string" ? { address } : {}),
      }),
  );
  return runForOutput(session, {
    endpoint: client.endpoint,
    say: (text) => note(`ha-module join: ${text}`),
    print: () => printSessionEvents(session),
    onStdoutLost: "saying goodbye",
  });
}
