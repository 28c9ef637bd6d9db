/**
 * The `ha-module` binary of the installed client and of the single executable, each this
 * file and what it imports bundled into one (scripts/client-bundles.mjs): the command line
 * of cli.ts with every command but `serve`, whose code (the local host, the functions app,
 * the Azure SDKs) only the repository has (main.ts).
 *
 * A bundle has no watchdog.js beside it, so `run` starts this same program as its
 * watchdog: Node with this file (the npm package) or the executable itself, with
 * WATCHDOG_ARGUMENT first. Either way the watchdog is the very code `run` was built with.
 */
import { isSea } from "node:sea";
import { fileURLToPath } from "node:url";
import { runCli } from "./cli.js";
import { EXIT } from "./exit-codes.js";
import { startWatchdogsWith } from "./supervise/process-group.js";
import { WATCHDOG_ARGUMENT, runWatchdog } from "./supervise/watchdog-program.js";

/** One line: what a user who typed `ha-module serve` on a worker should do instead. */
export const SERVE_ELSEWHERE =
  "ha-module serve: the service is not part of this client (the ha-module package or executable); run it from a clone of the repository with `npm install && npm start`, or deploy it to Azure (docs/deploy.md).\n";

const [first, ...rest] = process.argv.slice(2);
if (first === WATCHDOG_ARGUMENT) runWatchdog(rest);
else {
  // In the single executable import.meta.url is undefined (a CommonJS script with no file); the executable is the program.
  startWatchdogsWith({ command: process.execPath, args: isSea() ? [WATCHDOG_ARGUMENT] : [fileURLToPath(import.meta.url), WATCHDOG_ARGUMENT] });
  runCli(async () => {
    process.stderr.write(SERVE_ELSEWHERE);
    return EXIT.failure;
  });
}
