import { checkId, checkOptionalString } from "../../sdk/loop/option-checks.js";
import { describeUnfixable, unfixableCallHint } from "../call-failures.js";
import { asUsageError } from "../cli-elector.js";
import { CLIENT_OPTIONS, clientOf, clientSettings, onlyUtype } from "../client-flags.js";
import type { CommandLine, CommandSpec } from "../command-spec.js";
import { EXIT } from "../exit-codes.js";
import { note } from "../output-lines.js";
import { UsageError } from "../usage-error.js";
import { requestHandover } from "./handover.js";

export const releaseSpec: CommandSpec = {
  name: "release",
  synopsis: "<utype> [options]",
  summary: "make <utype>'s primary step down gracefully (--revoke: at once, the role waits out the lease)",
  details: [
    "By default a graceful step-down: a planned handover to any standby (see `ha-module handover`).",
    "The primary stops its work at its next heartbeat (`run`: SIGTERM, the grace, SIGKILL, within the",
    "time left), releases with its token, and a standby takes over at once. Prints",
    "{\"outcome\":\"requested\",…LeaseView}.",
    "With --revoke it revokes instead: the holder is told to step down at its next heartbeat and nobody",
    "takes over before its lease runs out, since it may still be working (docs/protocol.md, \"Release",
    "and revoke\"): for a primary that does not answer. With --lease (the holder's token from its last",
    "accepted heartbeat, with --uuid) it releases that lease at once. These print",
    "{\"outcome\":\"revoked\"|\"released\",…LeaseView}.",
    "Exits 0 when done, 3 when the role has no live primary, 1 when another uuid holds it or the call",
    "failed.",
  ].join("\n"),
  options: [
    { name: "uuid", value: "U", help: "act only if U holds the lease (default: whoever holds it now)" },
    { name: "revoke", help: "revoke instead of a graceful step-down: nobody takes over before the lease runs out" },
    { name: "lease", value: "TOKEN", help: "U's lease token: release at once (needs --uuid)" },
    ...CLIENT_OPTIONS,
  ],
};

/**
 * `ha-module release <utype> [--uuid U] [--revoke | --lease TOKEN]`: by default a graceful
 * step-down (a handover to any standby); --revoke and --lease are an operator's (or a
 * script's) DELETE, without and with the holder's token.
 */
export async function releaseCommand({ values, positionals }: CommandLine, env: NodeJS.ProcessEnv): Promise<number> {
  const utype = asUsageError(() => checkId("utype", onlyUtype("release", positionals)));
  const client = clientSettings(values, env);
  const uuid = values["uuid"] === undefined ? undefined : asUsageError(() => checkId("uuid", values["uuid"]));
  const lease = asUsageError(() => checkOptionalString("lease", values["lease"]));
  if (lease !== undefined && uuid === undefined) {
    throw new UsageError("--lease needs --uuid: a lease token belongs to one uuid, the holder that got it.");
  }
  const revoke = values["revoke"] === true;
  if (revoke && lease !== undefined) throw new UsageError("--revoke and --lease exclude each other: with the token it is a release, without it a revoke.");
  const ha = clientOf(client);
  try {
    // Who holds it now: a DELETE is always for one uuid, and a script should not have to ask first.
    const now = await ha.getPrimary(utype);
    if (now.primary === null) {
      process.stdout.write(`${JSON.stringify({ outcome: "none", ...now })}\n`);
      note(`ha-module release: ${utype} has no live primary (epoch ${now.epoch}); nothing to do.`);
      return EXIT.noPrimary;
    }
    if (uuid !== undefined && now.primary.uuid !== uuid) {
      process.stdout.write(`${JSON.stringify({ outcome: "held", ...now })}\n`);
      note(`ha-module release: ${utype} is held by ${now.primary.uuid}, not ${uuid}; nothing done.`);
      return EXIT.failure;
    }
    // The graceful step-down: the holder stops its work and releases with its own token.
    if (!revoke && lease === undefined) return await requestHandover("release", utype, undefined, client);
    const holder = uuid ?? now.primary.uuid;
    const result = await ha.release(utype, holder, lease === undefined ? {} : { lease });
    process.stdout.write(`${JSON.stringify({ outcome: result.outcome, ...result.view })}\n`);
    switch (result.outcome) {
      case "revoked":
        note(
          `ha-module release: revoked ${holder} (epoch ${result.view.epoch}): it steps down at its next heartbeat; ` +
            `a standby can take over when the lease expires, in ${result.view.primary?.expiresInMs ?? 0} ms.`,
        );
        return EXIT.ok;
      case "released":
        note(
          lease === undefined
            ? `ha-module release: ${holder}'s lease had run out; it is cleared.`
            : `ha-module release: released ${holder}'s lease; a standby may take over at once.`,
        );
        return EXIT.ok;
      case "held":
        note(`ha-module release: ${utype} changed hands meanwhile (now ${result.view.primary?.uuid ?? "nobody"}); nothing done.`);
        return EXIT.failure;
      case "conflict":
        note(`ha-module release: the write lost a race with another; nothing done. Try again.`);
        return EXIT.failure;
    }
  } catch (error) {
    const hint = unfixableCallHint(error, client.endpoint);
    if (hint === undefined || !(error instanceof Error)) throw error;
    note(`ha-module: ${describeUnfixable(error, hint)}`);
    return EXIT.failure;
  }
}
