import { systemElectorClock } from "../../sdk/loop/elector-clock.js";
import { type HaClient } from "../../sdk/transport/ha-client.js";
import { checkId } from "../../sdk/loop/option-checks.js";
import { describeUnfixable, unfixableCallHint } from "../call-failures.js";
import { asUsageError } from "../cli-elector.js";
import { CLIENT_OPTIONS, clientOf, clientSettings, type ClientSettings } from "../client-flags.js";
import type { CommandLine, CommandSpec } from "../command-spec.js";
import { EXIT } from "../exit-codes.js";
import { note, printEvent } from "../output-lines.js";
import { primarySummary } from "../primary-summary.js";
import { watchPrimary } from "../primary-watch.js";
import { guardOutput, stdoutLost } from "../stdout-guard.js";
import { untilSignal } from "../supervise/stop-signals.js";
import { UsageError } from "../usage-error.js";

export const primarySpec: CommandSpec = {
  name: "primary",
  synopsis: "[utype] [options]",
  summary: "who is primary for <utype> (every role without one), as JSON; --watch follows it",
  details: [
    "Prints GetPrimary of <utype> as one JSON line: the LeaseView with its \"standbys\" (each",
    "{uuid, address, seenAt}) and \"handover\" (a planned handover, or null); its top-level",
    "\"epoch\" is the role's epoch even when nobody holds it. On stderr, the same for people:",
    "the primary, a pending handover, and each standby's address, uuid and how long ago the",
    "service saw it. Exits 0 when the role has a live primary, 3 when it has none.",
    "",
    "Without a utype, prints {\"primaries\": […]}, every live primary, and exits 0; --vacant adds",
    "the roles that had a primary and have none now (each with \"vacantSince\"), --standbys",
    "each role's standbys.",
    "",
    "With --watch, observes <utype> without competing: one JSON line now and one at every change",
    "of its primary (another uuid, epoch or address, a revoke, or none), until Ctrl-C:",
    '  {"event":"primaryChanged","utype":…,"primary":{…}|null,"epoch":3,"at":"<ISO time>"}',
  ].join("\n"),
  options: [
    { name: "watch", help: "keep printing a line at every change of <utype>'s primary" },
    { name: "vacant", help: "without a utype: list the roles that have no primary now too" },
    { name: "standbys", help: "without a utype: add each role's standbys" },
    ...CLIENT_OPTIONS,
  ],
};

/** `ha-module primary [utype] [--watch]`. */
export async function primaryCommand({ values, positionals }: CommandLine, env: NodeJS.ProcessEnv): Promise<number> {
  if (positionals.length > 1) throw new UsageError(`primary takes at most one utype (got ${positionals.length}).`);
  const client = clientSettings(values, env);
  const utype = positionals[0] === undefined ? undefined : asUsageError(() => checkId("utype", positionals[0]));
  const ha = clientOf(client);
  if (values["watch"] === true) {
    if (utype === undefined) throw new UsageError("primary --watch needs a utype: the role to watch.");
    return watch(ha, utype, client);
  }
  if (utype !== undefined && (values["vacant"] === true || values["standbys"] === true)) {
    throw new UsageError(`--${values["vacant"] === true ? "vacant" : "standbys"} is for the list (no utype): primary <utype> always shows its standbys.`);
  }
  try {
    if (utype === undefined) {
      const primaries = await ha.listPrimaries({ vacant: values["vacant"] === true, standbys: values["standbys"] === true });
      process.stdout.write(`${JSON.stringify({ primaries })}\n`);
      return EXIT.ok;
    }
    const view = await ha.getPrimary(utype, { standbys: true });
    process.stdout.write(`${JSON.stringify(view)}\n`);
    for (const line of primarySummary(view)) note(line);
    return view.primary === null ? EXIT.noPrimary : EXIT.ok;
  } catch (error) {
    const hint = unfixableCallHint(error, client.endpoint);
    if (hint === undefined || !(error instanceof Error)) throw error;
    note(`ha-module: ${describeUnfixable(error, hint)}`);
    return EXIT.failure;
  }
}

/** --watch: until SIGINT/SIGTERM or a closed stdout (exit 0), or a failure retrying cannot fix (exit 1). */
async function watch(ha: HaClient, utype: string, client: ClientSettings): Promise<number> {
  guardOutput();
  const stop = new AbortController();
  void untilSignal().then(() => stop.abort());
  void stdoutLost().then(() => stop.abort());
  let unfixable: string | undefined;
  const outcome = await watchPrimary({
    getPrimary: (name, options) => ha.getPrimary(name, options),
    utype,
    clock: systemElectorClock,
    abortSignal: stop.signal,
    onChange: (view) => printEvent("primaryChanged", { utype, primary: view.primary, epoch: view.epoch }),
    onFailure: (error) => {
      const hint = unfixableCallHint(error, client.endpoint);
      if (hint === undefined) {
        note(`ha-module primary: ${error.message}`);
        return true;
      }
      unfixable = describeUnfixable(error, hint);
      return false;
    },
  });
  if (outcome === "failed") {
    note(`ha-module primary: ${unfixable ?? "stopped"}`);
    return EXIT.failure;
  }
  return EXIT.ok;
}
