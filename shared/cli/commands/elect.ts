import { systemElectorClock } from "../../sdk/loop/elector-clock.js";
import { exitWhenUnfixable, FailureReport, untilUnfixable } from "../call-failures.js";
import { CANDIDATE_OPTIONS, createCliElector, identityLine } from "../cli-elector.js";
import { CLIENT_OPTIONS, clientSettings, onlyUtype, parseDuration } from "../client-flags.js";
import type { CommandLine, CommandSpec } from "../command-spec.js";
import { describeNotElected, untilGivenUp } from "../election-timeout.js";
import { printElectorEvents } from "../elector-event-lines.js";
import { EXIT } from "../exit-codes.js";
import { note } from "../output-lines.js";
import { exitWhenStdoutLost, guardOutput } from "../stdout-guard.js";
import { untilSignal } from "../supervise/stop-signals.js";

export const electSpec: CommandSpec = {
  name: "elect",
  synopsis: "<utype> [options]",
  summary: "join the election for <utype>; one JSON line per event",
  details: [
    "Competes for <utype> until Ctrl-C or SIGTERM, printing one JSON line per event:",
    '  {"event":"elected","utype":…,"uuid":…,"epoch":3,"at":"<ISO time>"}',
    '  {"event":"demoted",…,"reason":"rejected|revoked|lease-expired|affinity-lost|epoch-changed|resigned|handover|stopped",…}',
    '  {"event":"primaryChanged","utype":…,"primary":{…}|null,"epoch":…,"at":…}',
    "With --member NAME it is also a member of the group (--group, default <utype>) and watches",
    "it, printing join's and members --watch's lines too; all in one request per I.",
    "On SIGTERM or SIGINT it steps down and releases the lease (a standby takes over within",
    "about I) and exits 0. A wrong key (401) or endpoint (404) is reported once, with a hint, and",
    "retried, backing off, until the answer changes; --exit-on-auth-error exits 1 instead.",
  ].join("\n"),
  options: [...CANDIDATE_OPTIONS, ...CLIENT_OPTIONS],
};

/**
 * `ha-module elect <utype> [--address A] [--member NAME [--group G]] [--timeout D]`: joins the election and prints its
 * events as JSON lines until SIGTERM or SIGINT; then stops as PrimaryElector.stop() does
 * (demoted "stopped", then release, so a standby takes over within about one I) and exits 0.
 * It stops the same way, with another exit code, when stdout's reader goes away (1: its
 * events are all it is for, and a lease held for nobody would keep a standby out), on a
 * failed call that retrying cannot fix only with --exit-on-auth-error (1, with a hint;
 * otherwise it is reported once and retried, see FailureReport), and when --timeout gives up (4).
 */
export async function electCommand({ values, positionals }: CommandLine, env: NodeJS.ProcessEnv): Promise<number> {
  const utype = onlyUtype("elect", positionals);
  const client = clientSettings(values, env);
  const timeoutMs = parseDuration("timeout", values["timeout"]);
  const elector = createCliElector(utype, client, values, 0, env);
  guardOutput();
  printElectorEvents(elector);
  const say = (text: string): void => note(`ha-module elect: ${text}`);
  say(identityLine(client));
  const exitOnAuthError = values["exit-on-auth-error"] === true;
  // Without --exit-on-auth-error a 401, 403 or 404 is reported and retried: it never resolves.
  const unfixable = exitOnAuthError ? untilUnfixable(elector, client.endpoint, say) : new Promise<never>(() => undefined);
  if (!exitOnAuthError) new FailureReport(client.endpoint, say, timeoutMs === 0).watch(elector);
  const givenUp = timeoutMs === undefined ? new Promise<never>(() => undefined) : untilGivenUp(elector, timeoutMs, systemElectorClock);
  // A second signal does not end the process before the release: elector.stop() is bounded.
  const signalled = untilSignal((signal) => say(`${signal} again: releasing the lease, then exiting.`));
  elector.start();
  const exitCode = await Promise.race([
    signalled.then(() => EXIT.ok),
    exitWhenStdoutLost(say, "leaving the election and releasing the lease"),
    exitWhenUnfixable(unfixable, say),
    givenUp.then((outcome) => {
      say(describeNotElected(utype, outcome));
      return outcome.reason === "failed" ? EXIT.failure : EXIT.timedOut;
    }),
  ]);
  await elector.stop();
  return exitCode;
}
