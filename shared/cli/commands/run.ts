import { systemElectorClock } from "../../sdk/loop/elector-clock.js";
import { exitWhenUnfixable, FailureReport, untilUnfixable } from "../call-failures.js";
import { CHECK_HOST_DEFAULT, startCheckPrimaryServer } from "../supervise/check-primary-server.js";
import { ChildSupervisor, type CommandExit } from "../supervise/child-supervisor.js";
import { CANDIDATE_OPTIONS, createCliElector, identityLine } from "../cli-elector.js";
import { CLIENT_OPTIONS, clientOf, clientSettings, onlyUtype, parseDuration, parseMs, parsePort } from "../client-flags.js";
import { findCommandProblem } from "../supervise/command-lookup.js";
import type { CommandLine, CommandSpec } from "../command-spec.js";
import { describeNotElected, untilGivenUp } from "../election-timeout.js";
import { HealthMonitor, healthChecked, type CheckOutcome } from "../supervise/health-check.js";
import { chooseCooldownMs, HEALTH_OPTIONS, parseHealthFlags } from "../supervise/health-flags.js";
import { HEALTH_OUTPUT_LIMIT, shellProbe } from "../supervise/health-probe.js";
import { printElectorEvents } from "../elector-event-lines.js";
import { EXIT } from "../exit-codes.js";
import { LeaseBoundCommand } from "../supervise/lease-bound-command.js";
import { note, printEvent } from "../output-lines.js";
import { systemProcessGroups } from "../supervise/process-group.js";
import { chooseGraceMs } from "../supervise/run-grace.js";
import { learnServiceTiming } from "../service-timing.js";
import { exitWhenStdoutLost, guardOutput } from "../stdout-guard.js";
import { untilSignal } from "../supervise/stop-signals.js";
import { UsageError } from "../usage-error.js";
import { MAX_RIDE_THROUGH_MS } from "../../sdk/election/elector-options.js";

export const runSpec: CommandSpec = {
  name: "run",
  synopsis: "<utype> [options] -- <command> [args…]",
  summary: "run a command only while primary for <utype>",
  details: [
    "Runs the command (a process group of its own, with a watchdog) only while this process",
    "holds the lease of <utype>. Once the lease has only G ms left (--grace-ms), the group gets",
    "SIGTERM, and SIGKILL at the deadline; after a demotion it competes again. G must be below",
    "T − 2·I of the service (default (T − 2·I)/2). The command is looked up before competing:",
    "exit 127 when it is not found, 126 when it cannot be executed.",
    "",
    "The command's environment gets HA_UTYPE (the role), HA_UUID (this incarnation's uuid, the",
    "holder GetPrimary shows), HA_EPOCH (the fencing token: send it with every write) and",
    "HA_CHECK_URL (CheckPrimary). Its output goes to stderr; stdout carries the JSON event lines",
    "of elect, plus {\"event\":\"started\",\"pid\":…,\"epoch\":…} and {\"event\":\"exited\",\"pid\":…,\"code\":…}.",
    "With --member NAME, run is also a member of the group (--group, default <utype>) and watches",
    "it (the lines of join and members --watch), in the same one request per I as the role.",
    "If the command exits on its own, run releases the lease and exits with its code. A wrong key",
    "(401) or endpoint (404) is reported once and retried, backing off, with the command stopped,",
    "until the answer changes; --exit-on-auth-error exits 1 instead.",
    "",
    "--ride-through D (HA_RIDE_THROUGH) is for a command that fences every write with HA_EPOCH:",
    "through an outage of the service (no answer, timeouts, 5xx; never a refusal, a revoke or a",
    "handover) run stays primary and the command keeps running up to D past the lease's deadline,",
    "the epoch unchanged; the first answered renewal continues the term or ends it at once. Another",
    "participant may be elected meanwhile if only this one is cut off: the new epoch's writes win.",
    "",
    "--health-cmd CMD checks the command while it runs as primary, as Docker's HEALTHCHECK does:",
    "`sh -c CMD` with the command's environment, every --health-interval, killed after",
    "--health-timeout. After --health-retries failures in a row, run prints",
    '{"event":"unhealthy",…,"output":…,"exitCode":…,"timedOut":…,"failures":…}, the command gets',
    "SIGTERM and SIGKILL after the grace, inside the lease, the lease is released with its token",
    "so that a standby takes over at once, and run only watches for --health-cooldown before it",
    "competes again.",
  ].join("\n"),
  options: [
    ...CANDIDATE_OPTIONS,
    {
      name: "check-port",
      value: "P",
      help: 'serve CheckPrimary on port P: GET or HEAD /check-primary → 200 {"isPrimary":true,\n"epoch":…} or 503 {"isPrimary":false} (default: a free port; the URL is on stderr)',
    },
    { name: "check-host", value: "H", help: `the address CheckPrimary listens on (default ${CHECK_HOST_DEFAULT}, this host only;\n0.0.0.0 for every interface)` },
    { name: "grace-ms", value: "G", help: "ms between SIGTERM and SIGKILL, below T − 2·I (default (T − 2·I)/2)" },
    {
      name: "ride-through",
      value: "D",
      help: "only for a command that fences its writes with HA_EPOCH: through an outage of\nthe service, stay primary and keep the command up to D past the lease deadline\n(env HA_RIDE_THROUGH; default 0, off)",
    },
    ...HEALTH_OPTIONS,
    ...CLIENT_OPTIONS,
  ],
  trailing: true,
};

/**
 * `ha-module run <utype> [options] -- <command> [args…]`
 *
 * Runs the command only while primary, as a process group of its own with a watchdog,
 * with HA_UTYPE, HA_UUID, HA_EPOCH and HA_CHECK_URL in its environment (the epoch is its
 * fencing token). What it guarantees the command is in docs/protocol.md ("What
 * `ha-module run` guarantees a child"); in short:
 *
 * 1. Before competing it checks that the command can be started (127 / 126 otherwise),
 *    learns I and T from the service and refuses (exit 2) a grace that does not fit below
 *    T − 2·I; without --grace-ms the grace is (T − 2·I)/2.
 * 2. The command is stopped (SIGTERM to its group, SIGKILL after the grace) once the time
 *    left on the lease falls to the grace, so it is gone by the deadline; a lost term
 *    SIGKILLs it at once. The elector keeps competing.
 * 3. The command exits on its own: the rest of its group is stopped, the lease released,
 *    and `run` exits with the command's code.
 * 4. SIGTERM or SIGINT: the command's group is stopped first, then the lease is released;
 *    exit 0. A second one SIGKILLs the group at once, and the lease is still released. A
 *    closed stdout (EPIPE) does the same and exits 1, and --timeout giving up exits 4. A
 *    failed call that retrying cannot fix (401, 404) is reported once with a hint and
 *    retried, backing off (a lease held meanwhile runs out and the command is stopped, as
 *    for any lost lease), until the answer changes; with --exit-on-auth-error it exits 1.
 * 5. If `run` dies, the watchdog SIGKILLs the group; if `run` freezes, at the deadline.
 * 6. --health-cmd: while the command runs in its term, a check (health-check.ts) runs as
 *    Docker's HEALTHCHECK does; after --health-retries failures the command is stopped as
 *    on a revoke, the term is given up (released with its token) and `run` only watches
 *    for the cool-down (default T) before competing again, so a standby takes over.
 * 7. --ride-through D: the elector rides through an outage of the service up to D past the
 *    deadline (docs/protocol.md#ride-through), and the command with it (the time left that
 *    the rules above read includes the ride-through); `run` says at start that the command
 *    must fence its writes with HA_EPOCH, and CheckPrimary answers 503 while riding through.
 */
export async function runCommand({ values, positionals, trailing }: CommandLine, env: NodeJS.ProcessEnv): Promise<number> {
  if (trailing.length === 0) {
    throw new UsageError("run needs the command to run after --, e.g. ha-module run scheduler -- node scheduler.js");
  }
  const [command, ...commandArgs] = trailing as [string, ...string[]];
  const utype = onlyUtype("run", positionals);
  const client = clientSettings(values, env);
  // Always served, on a free port unless one is given, so that HA_CHECK_URL is always set.
  const checkPort = parsePort("check-port", values["check-port"]) ?? 0;
  const checkHost = typeof values["check-host"] === "string" ? values["check-host"] : CHECK_HOST_DEFAULT;
  const requestedGrace = values["grace-ms"] === undefined ? undefined : parseMs("grace-ms", values["grace-ms"], 0);
  const timeoutMs = parseDuration("timeout", values["timeout"]);
  const health = parseHealthFlags(values);
  const exitOnAuthError = values["exit-on-auth-error"] === true;
  const rideThroughMs = parseRideThrough(values["ride-through"], env);
  const elector = createCliElector(utype, client, values, rideThroughMs, env);
  const transport = clientOf(client);
  const say = (text: string): void => note(`ha-module run: ${text}`);
  say(identityLine(client));
  // A typo must not cost an election (and an epoch) per try: look before competing.
  const missing = findCommandProblem(command, env);
  if (missing !== undefined) {
    say(`cannot run ${missing.message}`);
    return missing.exitCode;
  }
  guardOutput();

  // Whatever ends run (a usage error found below included) ends the --timeout timer with it.
  const ended = new AbortController();
  try {
    // A second Ctrl-C (or SIGTERM) shortens the command's grace to nothing, but `run` still
    // releases the lease before it exits: it never dies holding it.
    let hurry = (signal: NodeJS.Signals): void => say(`${signal} again: stopping already; the lease is released before run exits.`);
    const signalled = untilSignal((signal) => hurry(signal));
    const givenUp = timeoutMs === undefined ? new Promise<never>(() => undefined) : untilGivenUp(elector, timeoutMs, systemElectorClock, ended.signal);
    const notElected = givenUp.then((outcome) => {
      say(describeNotElected(utype, outcome));
      return outcome.reason === "failed" ? EXIT.failure : EXIT.timedOut;
    });
    const beforeCompeting = new AbortController();
    let refusal: number | undefined;
    void signalled.then(() => beforeCompeting.abort());
    void notElected.then((code) => {
      refusal ??= code;
      beforeCompeting.abort();
    });
    const failures = new FailureReport(client.endpoint, say, exitOnAuthError || timeoutMs === 0);
    const timing = await learnServiceTiming(transport, utype, beforeCompeting.signal, (error) => {
      const unfixable = failures.failed(error);
      // Retried, unless --exit-on-auth-error says to stop on a 401, 403 or 404, or --timeout 0 allows one attempt only.
      if (timeoutMs !== 0 && !(unfixable && exitOnAuthError)) return true;
      if (timeoutMs === 0 && !unfixable) say(describeNotElected(utype, { reason: "failed", error }));
      refusal = EXIT.failure;
      return false;
    });
    if (timing === undefined) return refusal ?? EXIT.ok; // stopped before the service ever answered
    failures.answered("read");
    const graceMs = chooseGraceMs(requestedGrace, timing);
    say(
      `grace ${graceMs} ms (${requestedGrace === undefined ? "default, (T − 2·I)/2" : "--grace-ms"}; ` +
        `the service's I = ${timing.intervalMs} ms, T = ${timing.timeoutMs} ms)`,
    );
    const cooldownMs = health === undefined ? 0 : chooseCooldownMs(health.cooldownMs, timing);
    if (rideThroughMs > 0) {
      say(
        `ride-through ${rideThroughMs} ms: through an outage of the service (no answer, timeouts, 5xx) this process stays primary and ` +
          `the command keeps running up to ${rideThroughMs} ms past the lease's deadline, and another process may be elected meanwhile ` +
          "if only this one is cut off. The command must fence every write with HA_EPOCH (a store that refuses a lower epoch than it has " +
          "seen, docs/fencing.md); CheckPrimary answers 503 while the lease is not exclusive.",
      );
    }

    const checkServer = await startCheckPrimaryServer(elector, checkPort, checkHost);
    say(`CheckPrimary on ${checkServer.url}`);
    const clock = systemElectorClock;
    const supervisor = (onExit: (exit: CommandExit) => void): ChildSupervisor =>
      new ChildSupervisor({ utype, command, args: commandArgs, graceMs, clock, groups: systemProcessGroups(clock), onExit, printEvent, note });
    const monitor = health === undefined ? undefined : new HealthMonitor(health.settings, clock);
    const commandLease: LeaseBoundCommand = new LeaseBoundCommand({
      lease: elector,
      command:
        health === undefined || monitor === undefined
          ? supervisor
          : healthChecked(supervisor, monitor, (request) => ({
              probe: shellProbe(health.command, request.env),
              listener: {
                checked: (outcome) => sayChecked(outcome, health.settings.retries, say),
                unhealthy: (outcome) => {
                  const uuid = request.env["HA_UUID"];
                  printEvent("unhealthy", { utype, uuid, epoch: request.epoch, ...unhealthyFields(outcome), cooldownMs });
                  commandLease.stepDown(request.term, `its health check failed ${outcome.failures} times in a row`, cooldownMs);
                },
              },
            })),
      clock,
      graceMs,
      intervalMs: () => elector.timing?.intervalMs ?? timing.intervalMs,
      environment: (uuid, epoch) => ({ ...env, HA_UTYPE: utype, HA_UUID: uuid, HA_EPOCH: String(epoch), HA_CHECK_URL: checkServer.localUrl }),
      note: say,
    });
    hurry = (signal) => {
      say(`${signal} again: the command gets SIGKILL now; the lease is released before run exits.`);
      commandLease.hurry(`${signal} again`);
    };
    printElectorEvents(elector);
    // Without --exit-on-auth-error a 401, 403 or 404 is reported and retried: it never resolves.
    const unfixable = exitOnAuthError ? untilUnfixable(elector, client.endpoint, say) : new Promise<never>(() => undefined);
    if (!exitOnAuthError) failures.watch(elector);
    elector.on("elected", () => commandLease.update());
    // `stopped` (run's own stop) resolves once the command's group is gone: only then the release.
    elector.on("demoted", ({ reason }) => commandLease.demoted(reason));

    elector.start();
    const exitCode = await Promise.race([
      signalled.then(() => EXIT.ok),
      commandLease.ownExit,
      exitWhenStdoutLost(say, "stopping the command and releasing the lease"),
      exitWhenUnfixable(unfixable, say),
      notElected,
    ]);
    // The command's group first, measured against the lease while it is still held…
    const wound = commandLease.shutDown();
    // …then demoted (stopped), whose handler waits for that, then the release.
    await elector.stop();
    await wound;
    await monitor?.whenIdle();
    await checkServer.close();
    return exitCode;
  } finally {
    ended.abort();
  }
}

/**
 * --ride-through, or HA_RIDE_THROUGH when the flag is not given: 0 (off) by default. A
 * duration as the command line reads them (parseDuration), no longer than a timer can wait.
 */
export function parseRideThrough(flag: string | boolean | undefined, env: NodeJS.ProcessEnv): number {
  const fromEnvironment = flag === undefined ? env["HA_RIDE_THROUGH"]?.trim() || undefined : undefined;
  let ms: number | undefined;
  try {
    ms = parseDuration("ride-through", flag ?? fromEnvironment);
  } catch (error) {
    if (fromEnvironment === undefined || !(error instanceof UsageError)) throw error;
    throw new UsageError(`HA_RIDE_THROUGH must be a duration with a unit, such as 30s or 5m, or 0 for off (got ${JSON.stringify(fromEnvironment)}).`);
  }
  if (ms === undefined) return 0;
  if (ms > MAX_RIDE_THROUGH_MS) {
    const source = flag === undefined ? "HA_RIDE_THROUGH" : "--ride-through";
    throw new UsageError(`${source} ${ms}ms is longer than a timer can wait: give at most ${MAX_RIDE_THROUGH_MS}ms (about 24 days).`);
  }
  return ms;
}

/** The `unhealthy` event's account of the last check: its output (trimmed, bounded), its exit code or that it timed out, and the failures counted. */
export function unhealthyFields(outcome: CheckOutcome): Record<string, unknown> {
  return {
    failures: outcome.failures,
    exitCode: outcome.exitCode ?? null,
    timedOut: outcome.timedOut,
    output: bounded(outcome.output),
  };
}

/** One line on stderr per failed check, for people. */
function sayChecked(outcome: CheckOutcome, retries: number, say: (text: string) => void): void {
  if (outcome.healthy) return;
  const how = outcome.timedOut ? "timed out" : `exit code ${outcome.exitCode}`;
  const count = outcome.counted ? `${outcome.failures} of ${retries}` : "not counted: start period";
  const said = outcome.output === "" ? "" : `: ${bounded(outcome.output.split("\n")[0] ?? "", 200)}`;
  say(`health check failed (${count}), ${how}${said}`);
}

function bounded(text: string, limit = HEALTH_OUTPUT_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…`;
}
