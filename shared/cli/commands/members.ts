import { MembersWatcher } from "../../sdk/index.js";
import { checkId } from "../../sdk/loop/option-checks.js";
import { describeUnfixable, unfixableCallHint } from "../call-failures.js";
import { asUsageError } from "../cli-elector.js";
import { CLIENT_OPTIONS, clientOf, clientSettings } from "../client-flags.js";
import type { CommandLine, CommandSpec } from "../command-spec.js";
import { EXIT } from "../exit-codes.js";
import { printWatcherEvents } from "../member-event-lines.js";
import { groupTable, memberTable } from "../member-table.js";
import { note } from "../output-lines.js";
import { runForOutput } from "../run-for-output.js";
import { UsageError } from "../usage-error.js";

export const membersSpec: CommandSpec = {
  name: "members",
  synopsis: "[group] [options]",
  summary: "the group's members and their states (every group's counts without one)",
  details: [
    "Prints the group's members as a table: MEMBER STATE AGE SESSION ADDRESS, every member judged",
    "by the service at one instant; without a group, every group's members counted by state.",
    "--json prints the service's answer instead. With --watch (a group needed), one JSON line per",
    "state change until Ctrl-C, named as the SDK's MembersWatcher names them:",
    '  {"event":"memberUnreachable","group":…,"member":…,"session":…,"address":…,"state":"unreachable","at":…}',
    "(memberJoined, memberActive, memberUnreachable, memberLeaving, memberRemoved).",
    "A wrong key (401) or endpoint (404) exits 1 at once, with a hint.",
  ].join("\n"),
  options: [
    { name: "json", help: "print the service's JSON answer instead of a table" },
    { name: "watch", help: "keep printing one JSON line per state change of the group's members" },
    ...CLIENT_OPTIONS,
  ],
};

/**
 * `ha-module members [group] [--json | --watch]`: the group's members as a table (every
 * group's counts without a group), or as one JSON document with --json; with --watch, one
 * JSON line per state change (the SDK's MembersWatcher events) until SIGTERM or SIGINT.
 */
export async function membersCommand({ values, positionals }: CommandLine, env: NodeJS.ProcessEnv): Promise<number> {
  if (positionals.length > 1) throw new UsageError(`members takes at most one group (got ${positionals.length}).`);
  if (values["json"] === true && values["watch"] === true) throw new UsageError("--json and --watch do not go together: --watch prints JSON lines already.");
  const client = clientSettings(values, env);
  const group = positionals[0] === undefined ? undefined : asUsageError(() => checkId("group", positionals[0]));
  const ha = clientOf(client);
  const connection = { transport: ha };
  if (values["watch"] === true) {
    if (group === undefined) throw new UsageError("members --watch needs a group.");
    return watch(asUsageError(() => new MembersWatcher({ group, ...connection })), client.endpoint);
  }
  try {
    if (group === undefined) {
      const groups = await ha.listGroups();
      process.stdout.write(values["json"] === true ? `${JSON.stringify(groups)}\n` : groupTable(groups));
      return EXIT.ok;
    }
    const list = await ha.listMembers(group);
    process.stdout.write(values["json"] === true ? `${JSON.stringify(list)}\n` : memberTable(list));
    return EXIT.ok;
  } catch (error) {
    const hint = unfixableCallHint(error, client.endpoint);
    if (hint === undefined || !(error instanceof Error)) throw error;
    note(`ha-module members: ${describeUnfixable(error, hint)}`);
    return EXIT.failure;
  }
}

function watch(watcher: MembersWatcher, endpoint: string): Promise<number> {
  return runForOutput(watcher, {
    endpoint,
    say: (text) => note(`ha-module members: ${text}`),
    print: () => printWatcherEvents(watcher),
    onStdoutLost: "stopping the watch",
  });
}
