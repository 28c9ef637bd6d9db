import type { HandoverResult } from "../../contract/outcomes.js";
import { handoverSeenWithinMs } from "../../contract/timing.js";
import { checkId, checkOptionalString } from "../../sdk/loop/option-checks.js";
import { describeUnfixable, unfixableCallHint } from "../call-failures.js";
import { asUsageError } from "../cli-elector.js";
import { CLIENT_OPTIONS, clientOf, clientSettings, onlyUtype, type ClientSettings } from "../client-flags.js";
import type { CommandLine, CommandSpec } from "../command-spec.js";
import { EXIT } from "../exit-codes.js";
import { note } from "../output-lines.js";

export const handoverSpec: CommandSpec = {
  name: "handover",
  synopsis: "<utype> [--to STANDBY] [options]",
  summary: "planned handover: <utype>'s primary steps down, to STANDBY or to any standby",
  details: [
    "The primary learns it at its next heartbeat (within I), stops its work as it would on stop()",
    "(`run`: SIGTERM, the grace, SIGKILL, all within the time left) and releases with its token.",
    "With --to (a standby's uuid or address, see `ha-module primary <utype>`), only that standby may",
    "take over, for one lease length; without it, any standby (docs/protocol.md, \"Planned handover\").",
    "A primary that does not answer is not forced: after T its renewals are refused and the role",
    "waits for its lease to run out, as after a revoke.",
    "Prints {\"outcome\":\"requested\",…LeaseView}. Exits 0 when requested, 3 when the role has no live",
    "primary, 1 when --to names no standby seen within T/2 + 2·I (the known ones are listed, and when",
    "the one named was last seen) or the call failed.",
  ].join("\n"),
  options: [{ name: "to", value: "STANDBY", help: "the standby to take over: its uuid or address (default: any)" }, ...CLIENT_OPTIONS],
};

/** `ha-module handover <utype> [--to STANDBY]`. */
export async function handoverCommand({ values, positionals }: CommandLine, env: NodeJS.ProcessEnv): Promise<number> {
  const utype = asUsageError(() => checkId("utype", onlyUtype("handover", positionals)));
  const to = asUsageError(() => checkOptionalString("--to", values["to"]));
  return requestHandover("handover", utype, to, clientSettings(values, env));
}

/**
 * Sends the handover request and says what happens next; `release` (its graceful form) uses
 * it too. The exit code as `handover` documents it.
 */
export async function requestHandover(command: string, utype: string, to: string | undefined, client: ClientSettings): Promise<number> {
  const ha = clientOf(client);
  let result: HandoverResult;
  try {
    result = await ha.handover(utype, to === undefined ? {} : { to });
  } catch (error) {
    const hint = unfixableCallHint(error, client.endpoint);
    if (hint === undefined || !(error instanceof Error)) throw error;
    note(`ha-module: ${describeUnfixable(error, hint)}`);
    return EXIT.failure;
  }
  process.stdout.write(`${JSON.stringify({ outcome: result.outcome, ...result.view })}\n`);
  const { view } = result;
  switch (result.outcome) {
    case "requested": {
      const holder = view.primary === null ? "the primary" : `${view.primary.uuid} (epoch ${view.primary.epoch})`;
      const successor = view.handover?.to === null || view.handover === null ? "a standby takes over at once" : `${view.handover.to} takes over at once, and only it may until T after the release`;
      note(
        `ha-module ${command}: asked ${holder} to step down: it stops its work at its next heartbeat (within ${view.intervalMs} ms) ` +
          `and releases the lease; ${successor}. If it does not answer, its renewals are refused after ${view.handover?.until ?? "T"} ` +
          "and the role waits for its lease to run out.",
      );
      return EXIT.ok;
    }
    case "no-primary":
      note(`ha-module ${command}: ${utype} has no live primary (epoch ${view.epoch}); nothing to hand over.`);
      return EXIT.noPrimary;
    case "no-such-standby": {
      const known = result.standbys.map((standby) => `${standby.uuid}${standby.address === null ? "" : ` (${standby.address})`}`);
      const { lastSeen } = result;
      const withinMs = handoverSeenWithinMs(view);
      const why =
        lastSeen === undefined
          ? `names no standby of ${utype} seen within the last ${withinMs} ms (T/2 + 2·I, at most T)`
          : `names ${lastSeen.uuid}${lastSeen.address === null ? "" : ` (${lastSeen.address})`}, a standby of ${utype} last seen at ${lastSeen.seenAt}` +
            ` (about ${(Math.max(0, Date.now() - Date.parse(lastSeen.seenAt)) / 1000).toFixed(1)} s ago by this machine's clock). A live standby announces itself every T/2, so one not seen` +
            ` within ${withinMs} ms (T/2 + 2·I, at most T) has stopped or lost contact, and a handover to it would leave ${utype} without a primary for T`;
      note(
        `ha-module ${command}: --to ${JSON.stringify(to)} ${why}; ` +
          (known.length === 0 ? "none is known (a standby announces itself while it polls)." : `known: ${known.join(", ")}.`) +
          " Nothing was changed.",
      );
      return EXIT.failure;
    }
    case "conflict":
      note(`ha-module ${command}: other writes to ${utype} kept winning the race; nothing done. Try again.`);
      return EXIT.failure;
  }
}
