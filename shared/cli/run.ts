import { systemElectorClock } from "../sdk/elector-clock.js";
import { HaClient } from "../sdk/ha-client.js";
import { startCheckPrimaryServer } from "./check-primary-server.js";
import { asUsageError, createCliElector } from "./cli-elector.js";
import { ChildSupervisor } from "./child-supervisor.js";
import { onlyUtype, parseCommandLine, parseMs, parsePort } from "./client-flags.js";
import { printElectorEvents } from "./elector-event-lines.js";
import { note, printEvent } from "./output-lines.js";
import { guardOutput, stdoutLost } from "./stdout-guard.js";
import { LeaseBoundCommand } from "./lease-bound-command.js";
import { systemProcessGroups } from "./process-group.js";
import { chooseGraceMs } from "./run-grace.js";
import { learnServiceTiming } from "./service-timing.js";
import { untilSignal } from "./stop-signals.js";
import { UsageError } from "./usage.js";

/**
 * `ha-module run <utype> [--address A] [--check-port P] [--grace-ms G] -- <command> [args…]`
 *
 * Runs the command only while primary, as a process group of its own with a watchdog,
 * with HA_UTYPE, HA_UUID, HA_EPOCH and HA_CHECK_URL in its environment (the epoch is its
 * fencing token). What it guarantees the command is in docs/protocol.md ("What
 * `ha-module run` guarantees a child"); in short:
 *
 * 1. Before competing it learns I and T from the service and refuses (exit 2) a grace
 *    that does not fit below T − 2·I; without --grace-ms the grace is (T − 2·I)/2.
 * 2. The command is stopped (SIGTERM to its group, SIGKILL after the grace) once the time
 *    left on the lease falls to the grace, so it is gone by the deadline; a lost term
 *    SIGKILLs it at once. The elector keeps competing.
 * 3. The command exits on its own: the rest of its group is stopped, the lease released,
 *    and `run` exits with the command's code.
 * 4. SIGTERM or SIGINT: the command's group is stopped first, then the lease is released;
 *    exit 0. A closed stdout (EPIPE) does the same and exits 1.
 * 5. If `run` dies, the watchdog SIGKILLs the group; if `run` freezes, at the deadline.
 */
export async function runCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const separator = args.indexOf("--");
  if (separator === -1 || separator === args.length - 1) {
    throw new UsageError("run needs the command to run after --, e.g. ha-module run scheduler -- node scheduler.js");
  }
  const [command, ...commandArgs] = args.slice(separator + 1) as [string, ...string[]];
  const { values, positionals, client } = parseCommandLine(
    args.slice(0, separator),
    { address: { type: "string" }, "check-port": { type: "string" }, "grace-ms": { type: "string" } },
    env,
  );
  const utype = onlyUtype("run", positionals);
  // Always served, on a free port unless one is given, so that HA_CHECK_URL is always set.
  const checkPort = parsePort("check-port", values["check-port"]) ?? 0;
  const requestedGrace = values["grace-ms"] === undefined ? undefined : parseMs("grace-ms", values["grace-ms"], 0);
  const elector = createCliElector(utype, client, values["address"]);
  const transport = asUsageError(() => new HaClient({ endpoint: client.endpoint, ...(client.apiKey === undefined ? {} : { apiKey: client.apiKey }) }));
  guardOutput();

  const signalled = untilSignal();
  const beforeCompeting = new AbortController();
  void signalled.then(() => beforeCompeting.abort());
  const timing = await learnServiceTiming(transport, utype, beforeCompeting.signal, (error) => note(`ha-module run: ${error.message}`));
  if (timing === undefined) return 0; // stopped before the service ever answered
  const graceMs = chooseGraceMs(requestedGrace, timing);
  note(
    `ha-module run: grace ${graceMs} ms (${requestedGrace === undefined ? "default, (T − 2·I)/2" : "--grace-ms"}; ` +
      `the service's I = ${timing.intervalMs} ms, T = ${timing.timeoutMs} ms)`,
  );

  const checkServer = await startCheckPrimaryServer(elector, checkPort);
  note(`ha-module run: CheckPrimary on ${checkServer.url}`);
  const clock = systemElectorClock;
  const commandLease = new LeaseBoundCommand({
    lease: elector,
    command: (onExit) =>
      new ChildSupervisor({ utype, command, args: commandArgs, graceMs, clock, groups: systemProcessGroups(clock), onExit, printEvent, note }),
    clock,
    graceMs,
    intervalMs: () => elector.timing?.intervalMs ?? timing.intervalMs,
    environment: (uuid, epoch) => ({ ...env, HA_UTYPE: utype, HA_UUID: uuid, HA_EPOCH: String(epoch), HA_CHECK_URL: checkServer.url }),
  });
  printElectorEvents(elector, "run");
  elector.on("elected", () => commandLease.update());
  // A `stopped` demotion is run's own stop: returning the wind-down makes the elector
  // release the lease only once the command's group is gone.
  elector.on("demoted", ({ reason }) => (reason === "stopped" ? commandLease.shutDown() : commandLease.update()));

  elector.start();
  const exitCode = await Promise.race([
    signalled.then(() => 0),
    commandLease.ownExit,
    stdoutLost().then((error) => {
      note(`ha-module run: stdout is closed (${error.message}); stopping the command and releasing the lease.`);
      return 1;
    }),
  ]);
  // The command's group first, measured against the lease while it is still held…
  const wound = commandLease.shutDown();
  // …then demoted (stopped), whose handler waits for that, then the release.
  await elector.stop();
  await wound;
  await checkServer.close();
  return exitCode;
}
