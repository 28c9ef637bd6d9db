import { startCheckPrimaryServer } from "./check-primary-server.js";
import { ChildSupervisor } from "./child-supervisor.js";
import { onlyUtype, parseCommandLine, parseMs, parsePort } from "./client-flags.js";
import { createCliElector, printElectorEvents, untilSignal } from "./event-lines.js";
import { UsageError } from "./usage.js";

const DEFAULT_GRACE_MS = 5000;

/**
 * `ha-module run <utype> [--address A] [--check-port P] [--grace-ms G] -- <command> [args…]`
 *
 * Runs the command only while primary, with HA_UTYPE, HA_UUID and HA_EPOCH in its
 * environment (the epoch is its fencing token). On demotion the command gets SIGTERM,
 * then SIGKILL after G ms, and the elector keeps competing. If the command exits on its
 * own, the lease is released and `run` exits with the command's code. SIGTERM or SIGINT
 * stops the command first, then releases the lease, and exits 0.
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
  const checkPort = parsePort("check-port", values["check-port"]);
  const graceMs = parseMs("grace-ms", values["grace-ms"], DEFAULT_GRACE_MS);
  const elector = createCliElector(utype, client, values["address"]);

  let commandExited!: (code: number) => void;
  const ownExit = new Promise<number>((resolve) => (commandExited = resolve));
  const supervisor = new ChildSupervisor(utype, command, commandArgs, graceMs, (code) => commandExited(code));
  printElectorEvents(elector, "run");
  elector.on("elected", ({ uuid, epoch }) =>
    supervisor.start({ HA_UTYPE: utype, HA_UUID: uuid, HA_EPOCH: String(epoch) }, () => elector.epoch === epoch),
  );
  // Returned, so that stop() awaits it: the command is gone before the lease is released.
  elector.on("demoted", () => supervisor.stop());

  const checkServer = checkPort === undefined ? undefined : await startCheckPrimaryServer(elector, checkPort);
  if (checkServer !== undefined) process.stderr.write(`ha-module run: CheckPrimary on ${checkServer.url}\n`);
  elector.start();
  const exitCode = await Promise.race([untilSignal().then(() => 0), ownExit]);
  await elector.stop();
  await supervisor.stop();
  await checkServer?.close();
  return exitCode;
}
