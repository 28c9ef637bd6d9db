/**
 * `node work.js <log> <participant> [periodMs]`: the command `ha-module run` supervises in the
 * outage benchmark. While it lives it appends `<ms> <participant> <epoch>` (Date.now(), its
 * HA_EPOCH) to the role's log every `periodMs` (default 20), the first line at once: the
 * role's work, as figures.ts reads it. It does nothing to stop itself; `run` stops it.
 */
import { openSync, writeSync } from "node:fs";

const [log, participant, periodText = "20"] = process.argv.slice(2);
const epoch = process.env["HA_EPOCH"];
const periodMs = Number(periodText);
if (log === undefined || participant === undefined || epoch === undefined || !Number.isSafeInteger(periodMs) || periodMs < 1) {
  process.stderr.write(`outage work: expected <log> <participant> [periodMs] under ha-module run, got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(2);
}
// O_APPEND: each line is one write(2) at the end of the file, so lines of two commands never interleave.
const fd = openSync(log, "a");
const line = (): void => void writeSync(fd, `${Date.now()} ${participant} ${epoch}\n`);
line();
setInterval(line, periodMs);
