/**
 * `node worker.js <log> <participant> [periodMs] [lifetimeMs]`: the command that `ha-module
 * run` supervises in a chaos run. While it lives it appends `<epoch> <pid> <ns> <participant>`
 * to the shared log (log-line.ts) every `periodMs` (default 3), the first line at once.
 * With `lifetimeMs` (only the planted bug `reused-epoch` gives one) it exits 0 after that long.
 *
 * It does nothing to stop itself: no SIGTERM handler (the default disposition ends it),
 * no stdin EOF watch, no CheckPrimary poll. Whether it outlives its lease is up to `run`
 * (its group signals and the watchdog), which is what the chaos run judges.
 */
import { openSync, writeSync } from "node:fs";
import { formatLogLine } from "./log-line.js";

const [logPath, participant, periodText = "3", lifetimeText] = process.argv.slice(2);
const epoch = Number(process.env["HA_EPOCH"]);
const periodMs = Number(periodText);
if (logPath === undefined || participant === undefined || !/^[A-Za-z0-9_-]+$/.test(participant)) {
  process.stderr.write(`chaos worker: expected <log> <participant> [periodMs] [lifetimeMs], got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(2);
}
if (!Number.isSafeInteger(epoch) || epoch < 1) {
  process.stderr.write(`chaos worker: HA_EPOCH must be a positive integer (got ${JSON.stringify(process.env["HA_EPOCH"])}); run it under ha-module run.\n`);
  process.exit(2);
}
if (!Number.isSafeInteger(periodMs) || periodMs < 1) {
  process.stderr.write(`chaos worker: periodMs must be a positive integer (got ${JSON.stringify(periodText)}).\n`);
  process.exit(2);
}

const lifetimeMs = lifetimeText === undefined ? undefined : Number(lifetimeText);
if (lifetimeMs !== undefined && (!Number.isSafeInteger(lifetimeMs) || lifetimeMs < 1)) {
  process.stderr.write(`chaos worker: lifetimeMs must be a positive integer (got ${JSON.stringify(lifetimeText)}).\n`);
  process.exit(2);
}

// "a": O_WRONLY | O_CREAT | O_APPEND. Each line is one write(2) of a few dozen bytes at the
// end of the file, so lines of different workers never interleave.
const fd = openSync(logPath, "a");
const writeLine = (): void => {
  writeSync(fd, formatLogLine({ epoch, pid: process.pid, atNs: process.hrtime.bigint(), participant }));
};
writeLine();
setInterval(writeLine, periodMs);
if (lifetimeMs !== undefined) setTimeout(() => process.exit(0), lifetimeMs);
