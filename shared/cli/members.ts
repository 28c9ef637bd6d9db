import { HaClient, MembersWatcher } from "../sdk/index.js";
import { checkId } from "../sdk/option-checks.js";
import { asUsageError } from "./cli-elector.js";
import { parseCommandLine } from "./client-flags.js";
import { printWatcherEvents } from "./member-event-lines.js";
import { groupTable, memberTable } from "./member-table.js";
import { note } from "./output-lines.js";
import { guardOutput, stdoutLost } from "./stdout-guard.js";
import { untilSignal } from "./stop-signals.js";
import { UsageError } from "./usage.js";

/**
 * `ha-module members [group] [--json | --watch]`: the group's members as a table (every
 * group's counts without a group), or as one JSON document with --json; with --watch, one
 * JSON line per state change (the SDK's MembersWatcher events) until SIGTERM or SIGINT.
 */
export async function membersCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals, client } = parseCommandLine(args, { json: { type: "boolean" }, watch: { type: "boolean" } }, env);
  if (positionals.length > 1) throw new UsageError(`members takes at most one group (got ${positionals.length}).`);
  if (values["json"] === true && values["watch"] === true) throw new UsageError("--json and --watch do not go together: --watch prints JSON lines already.");
  const group = positionals[0] === undefined ? undefined : asUsageError(() => checkId("group", positionals[0]));
  const connection = { endpoint: client.endpoint, ...(client.apiKey === undefined ? {} : { apiKey: client.apiKey }) };
  if (values["watch"] === true) {
    if (group === undefined) throw new UsageError("members --watch needs a group.");
    return watch(asUsageError(() => new MembersWatcher({ group, ...connection })));
  }
  const ha = asUsageError(() => new HaClient(connection));
  if (group === undefined) {
    const groups = await ha.listGroups();
    process.stdout.write(values["json"] === true ? `${JSON.stringify(groups)}\n` : groupTable(groups));
    return 0;
  }
  const list = await ha.listMembers(group);
  process.stdout.write(values["json"] === true ? `${JSON.stringify(list)}\n` : memberTable(list));
  return 0;
}

async function watch(watcher: MembersWatcher): Promise<number> {
  guardOutput();
  printWatcherEvents(watcher, "members");
  const signalled = untilSignal();
  watcher.start();
  const exitCode = await Promise.race([
    signalled.then(() => 0),
    stdoutLost().then((error) => {
      note(`ha-module members: stdout is closed (${error.message}); stopping the watch.`);
      return 1;
    }),
  ]);
  await watcher.stop();
  return exitCode;
}
