/**
 * `node fleet.js <endpoint> <prefix> <count>`: `count` PrimaryElectors as shipped, one per
 * role `<prefix>-<i>`, in one process: the capacity step's participants (hundreds of
 * processes would measure the machine's process table, not the service).
 *
 * Writes {"event":"elected"|"demoted","role":i,"reason"?} lines; answers a "stats" line on
 * stdin with {"event":"stats", failures, heartbeats, p99Ms} over every elector.
 */
import { createInterface } from "node:readline";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import type { LeaseTransport } from "../../shared/sdk/transport/lease-transport.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";

const [endpoint, prefix, countText] = process.argv.slice(2);
const count = Number(countText);
if (endpoint === undefined || prefix === undefined || !Number.isSafeInteger(count) || count < 1) {
  process.stderr.write(`fleet: expected <endpoint> <prefix> <count>, got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(2);
}

const write = (line: object): boolean => process.stdout.write(`${JSON.stringify(line)}\n`);
/** Accepted heartbeats, counted as they return (stats() keeps only a window of round trips). */
let accepted = 0;
const client = new HaClient({ endpoint });
const transport: LeaseTransport = {
  getPrimary: (utype, options) => client.getPrimary(utype, options),
  heartbeat: async (utype, body, options) => {
    const result = await client.heartbeat(utype, body, options);
    if (result.outcome === "accepted") accepted += 1;
    return result;
  },
  release: (utype, uuid, options) => client.release(utype, uuid, options),
};
const electors = Array.from({ length: count }, (_, role) => {
  // The shipped elector over the shipped HaClient; the wrapper only counts.
  const elector = new PrimaryElector({ utype: `${prefix}-${role}`, transport });
  elector.on("elected", () => write({ event: "elected", role }));
  elector.on("demoted", ({ reason }) => write({ event: "demoted", role, reason }));
  elector.on("error", () => {
    // counted by stats().failures
  });
  return elector;
});
// Spread the starts over one second, as a fleet that comes up over time would.
electors.forEach((elector, i) => setTimeout(() => elector.start(), Math.round((i * 1000) / count)));

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() !== "stats") return;
  const stats = electors.map((elector) => elector.stats());
  const p99s = stats.map((s) => s.heartbeatRoundTrip.p99Ms).filter((p): p is number => p !== undefined && p !== null);
  write({
    event: "stats",
    failures: stats.reduce((sum, s) => sum + s.failures, 0),
    heartbeats: accepted,
    p99Ms: p99s.length === 0 ? null : Math.max(...p99s),
  });
});
