/**
 * `node watchdog.js <pgid> <killAtMs>`: the watchdog of `ha-module run` as the
 * repository's build starts it (process-group.ts); what it does is in watchdog-program.ts.
 */
import { runWatchdog } from "./watchdog-program.js";

runWatchdog(process.argv.slice(2));
