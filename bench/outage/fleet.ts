/**
 * `node fleet.js <endpoints> <prefix> <roles> <name> <rideThroughMs>`: one participant of the
 * upgrade benchmark, a process that competes for every role `<prefix><i>` (i < roles) with a
 * PrimaryElector per role as shipped, all on one HaClient over every instance's endpoint
 * (so its calls go out as one participant heartbeat per I), announced as `<name>`. With
 * `rideThroughMs` > 0 each elector rides through an outage that long (fenced work).
 *
 * Writes {"event":"elected"|"demoted"|"ridingThrough","role":i,"epoch":…,"reason"?,"at":<ms>}
 * lines on stdout, and {"event":"error","role":i,"code","status","message","at"} for each
 * failed call of a primary (elected, not yet demoted); on SIGTERM stops every elector (each
 * releases its role) and exits.
 */
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";

const [endpoint, prefix, rolesText, name, rideThroughText = "0"] = process.argv.slice(2);
const roles = Number(rolesText);
const rideThroughMs = Number(rideThroughText);
if (endpoint === undefined || prefix === undefined || name === undefined || !Number.isSafeInteger(roles) || roles < 1 || !Number.isSafeInteger(rideThroughMs) || rideThroughMs < 0) {
  process.stderr.write(`outage fleet: expected <endpoints> <prefix> <roles> <name> <rideThroughMs>, got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(2);
}

const write = (line: object): void => void process.stdout.write(`${JSON.stringify({ ...line, at: Date.now() })}\n`);
const client = new HaClient({ endpoint });
const electors = Array.from({ length: roles }, (_, role) => {
  // rideThroughMs is the elector's option for fenced work (docs/sdk.md); 0 leaves it off.
  const elector = new PrimaryElector({ utype: `${prefix}${role}`, transport: client, address: name, rideThroughMs });
  // From its election to its demotion (isPrimary() turns false T − I after a renewal, before that).
  let holding = false;
  elector.on("elected", ({ epoch }) => {
    holding = true;
    write({ event: "elected", role, epoch });
  });
  elector.on("demoted", ({ epoch, reason }) => {
    holding = false;
    write({ event: "demoted", role, epoch, reason });
  });
  elector.on("ridingThrough", ({ epoch, leftMs }) => write({ event: "ridingThrough", role, epoch, leftMs: Math.round(leftMs) }));
  elector.on("error", (error) => {
    // Failed calls are what an outage is; the events above tell what they cost. A primary's
    // are written too (a standby's would be 20 times as many), to tell what a demotion met.
    if (!holding) return;
    const failed = error as { code?: unknown; status?: unknown; message?: unknown };
    write({ event: "error", role, code: failed.code, status: failed.status, message: String(failed.message).slice(0, 300) });
  });
  return elector;
});
// Spread the starts over one I, as a fleet that comes up over time would.
electors.forEach((elector, index) => setTimeout(() => elector.start(), Math.round((index * 1000) / roles)));
process.once("SIGTERM", () => {
  void Promise.all(electors.map((elector) => elector.stop())).then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
