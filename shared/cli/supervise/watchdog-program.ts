import { systemElectorClock } from "../../sdk/loop/elector-clock.js";
import { WatchdogCore, parseKillAt } from "./watchdog-core.js";

/**
 * The argument that makes a bundled `ha-module` (the installed client, the single
 * executable) the watchdog instead of the command line: `<program> __ha-module-watchdog
 * <pgid> <killAtMs>` (client-main.ts). Not a command: --help never shows it.
 */
export const WATCHDOG_ARGUMENT = "__ha-module-watchdog";

/**
 * The lifeline of one command under `ha-module run` (the rules are in watchdog-core.ts),
 * given `<pgid> <killAtMs>`. `run` starts it in a session of its own, outside both its own
 * process group and the command's, so that neither a signal the command sends to its own
 * group (`kill 0`) nor a terminal's Ctrl-C or hangup reaches it; it also ignores SIGTERM,
 * SIGINT, SIGHUP and SIGQUIT. Only its pid can stop it, and only `run` does that, once the
 * command's group is gone.
 */
export function runWatchdog(args: readonly string[]): void {
  const [pgidText = "", killAtText = ""] = args;
  const pgid = /^[0-9]+$/.test(pgidText) ? Number(pgidText) : Number.NaN;
  const killAt = parseKillAt(killAtText);
  if (!Number.isSafeInteger(pgid) || pgid < 2 || killAt === undefined) {
    process.stderr.write(`ha-module watchdog: expected <pgid> <killAtMs>, got ${JSON.stringify(args)}\n`);
    process.exit(2);
  }

  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"] as const) process.on(signal, () => undefined);
  process.stderr.on("error", () => undefined);

  /** The same clock as `run`'s kill times: the host's monotonic clock, in ms. */
  const hostClock = { ...systemElectorClock, now: () => Number(process.hrtime.bigint()) / 1e6 };

  const core = new WatchdogCore(hostClock, killAt, (reason) => {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // ESRCH: the group is already gone.
    }
    process.stderr.write(`ha-module run watchdog: SIGKILLed process group ${pgid}: ${reason}.\n`);
    process.exit(0);
  });

  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (text: string) => core.input(text));
  process.stdin.on("end", () => core.lifelineCut());
  process.stdin.on("error", () => core.lifelineCut());
}
