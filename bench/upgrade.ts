/**
 * `npm run bench -- upgrade`: what upgrading the service costs its primaries, with real
 * processes. Several `ha-module serve` on one Azurite (its own process) and a fleet of
 * participants that list them all, each a process competing for every role with the SDK's
 * PrimaryElector (outage/fleet.ts): 20 participants × 20 roles by default, once as shipped
 * and once with ride-through (fenced work), one fleet after the other (both at once would
 * be 800 electors, this 2-core machine's capacity edge: docs/benchmarks.md#capacity). Two
 * ways to upgrade, each fleet through both:
 *
 *   rolling      one instance at a time: SIGTERM, started again on its port, and the next
 *                only once it answers GET /api/health (docs/deploy.md#upgrades)
 *   restart-all  every instance at once (SIGKILL), down for 3·T by default: what
 *                Flex Consumption's Recreate does on each deploy
 *
 * Per way and fleet, from the participants' own events: demotions, role moves, epoch
 * changes, seconds without a primary per role, and the time from the return to a primary.
 * Needs `npm run build`.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem, type } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { distribution, sleep, type Distribution } from "./compare/stats.js";
import { optionReaders, readArgs } from "./helpers/args.js";
import { startLineProcess, type LineProcess } from "./helpers/processes.js";
import { CLI, ServiceInstances, startStoreProcess, type StoreProcess } from "./helpers/service-instances.js";
import { primariesAt, roleMoves, untilPrimary, workLostMs, type RoleEvent, type Span } from "./outage/figures.js";

const FLEET = fileURLToPath(new URL("./outage/fleet.js", import.meta.url));

const USAGE = `Usage: npm run bench -- upgrade [options]

Upgrading the service under a fleet of participants (each a process competing for every role),
as shipped and with ride-through, one fleet after the other: a rolling restart of the \`serve\` instances
(one at a time, the next once the last answers health) and a restart of every instance at
once (down 3·T): demotions, role moves, epoch changes, work lost and the time to a primary.

Options:
  --participants N     participant processes per fleet (default 20)
  --roles N            roles every participant competes for (default 20)
  --instances N        serve instances on the one store (default 3)
  --rounds N           rolling restarts, and restarts of every instance (default 3 each)
  --down D             how long every instance stays down (default 3·T)
  --interval-ms I      the service's I (default 1000)
  --timeout-ms T       the service's T (default 5000)
  --ride-through D     the ride-through fleet's rideThroughMs (default 5m)
  --ways LIST          rolling,restart-all (default both)
  --store S            Azurite in memory (default) or durable (every write on disk before its
                       answer, as the other benches): the store's own speed is not measured here
  --out DIR            also write every participant's event lines and each failed call of a
                       primary (events.jsonl), and each instance's output, every line after
                       its Date.now() (serve-<n>.log), there
  --fleets LIST        default,ride-through (default both)
  --quick              a short run: 4 participants × 4 roles, 2 instances, one round each
  --json FILE          also write the report as JSON`;

const { values } = readArgs(USAGE, {
  participants: { type: "string" },
  roles: { type: "string" },
  instances: { type: "string" },
  rounds: { type: "string" },
  down: { type: "string" },
  "interval-ms": { type: "string" },
  "timeout-ms": { type: "string" },
  "ride-through": { type: "string", default: "5m" },
  ways: { type: "string", default: "rolling,restart-all" },
  store: { type: "string", default: "memory" },
  fleets: { type: "string", default: "default,ride-through" },
  out: { type: "string" },
  quick: { type: "boolean", default: false },
  json: { type: "string" },
});

const { usageError, whole, duration } = optionReaders(USAGE, values);

const QUICK = values.quick;
const I = whole("interval-ms", 1000);
const T = whole("timeout-ms", 5000);
const PARTICIPANTS = whole("participants", QUICK ? 4 : 20, 2);
const ROLES = whole("roles", QUICK ? 4 : 20);
const INSTANCES = whole("instances", QUICK ? 2 : 3, 2);
const ROUNDS = whole("rounds", QUICK ? 1 : 3);
const DOWN_MS = values.down === undefined ? 3 * T : duration("down", values.down);
const RIDE_THROUGH_MS = duration("ride-through", values["ride-through"]);
const WAYS = values.ways.split(",").map((way) => way.trim());
if (T <= 2 * I) usageError(`Need T > 2·I (got I = ${I}, T = ${T}).`);
if (values.store !== "memory" && values.store !== "durable") usageError(`--store must be memory or durable, got ${JSON.stringify(values.store)}.`);
if (WAYS.some((way) => way !== "rolling" && way !== "restart-all")) usageError(`--ways must be from rolling,restart-all, got ${JSON.stringify(values.ways)}.`);

/** Whether this build has ride-through (it came with sticky recovery; `run --help` names it). */
const RIDE_THROUGH_BUILT = spawnSync(process.execPath, [CLI, "run", "--help"], { encoding: "utf8" }).stdout.includes("--ride-through");
type FleetName = "default" | "ride-through";
const WANTED = values.fleets.split(",").map((fleet) => fleet.trim());
if (WANTED.some((fleet) => fleet !== "default" && fleet !== "ride-through")) usageError(`--fleets must be from default,ride-through, got ${JSON.stringify(values.fleets)}.`);
const FLEETS = WANTED.filter((fleet): fleet is FleetName => fleet === "default" || RIDE_THROUGH_BUILT);
const log = (line: string): void => void process.stderr.write(`upgrade: ${line}\n`);
if (FLEETS.length < WANTED.length) log("this build has no ride-through: the ride-through fleet is left out");
const OUT = values.out === undefined ? undefined : resolve(values.out);
if (OUT !== undefined) {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, "events.jsonl"), "");
}

/** Every role's events, per fleet: role index → its participants' elected/demoted events. */
const events = new Map<FleetName, RoleEvent[][]>(FLEETS.map((fleet) => [fleet, Array.from({ length: ROLES }, () => [])]));
/** When each `ridingThrough` event came, per fleet. */
const ridingThrough = new Map<FleetName, number[]>(FLEETS.map((fleet) => [fleet, []]));
const fleetProcesses: LineProcess[] = [];

function startFleet(fleet: FleetName, endpoints: string): void {
  for (let index = 0; index < PARTICIPANTS; index += 1) {
    const name = `${fleet}-p${index}`;
    const child = startLineProcess(FLEET, [endpoints, `upgrade-${fleet}-`, String(ROLES), name, String(fleet === "ride-through" ? RIDE_THROUGH_MS : 0)]);
    child.onLine((line) => {
      if (OUT !== undefined) appendFileSync(join(OUT, "events.jsonl"), `${JSON.stringify({ fleet, participant: name, ...line })}\n`);
      const role = Number(line["role"]);
      if (line.event === "ridingThrough") ridingThrough.get(fleet)!.push(Number(line["at"]));
      if ((line.event === "elected" || line.event === "demoted") && Number.isSafeInteger(role)) {
        events.get(fleet)![role]!.push({ at: Number(line["at"]), participant: name, event: line.event, term: String(line["epoch"]) });
      }
    });
    fleetProcesses.push(child);
  }
}

/** Waits until every role of `fleet` has one primary and no election for T. */
async function settled(fleet: FleetName, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = Date.now();
    const unsettled = events.get(fleet)!.filter((role) => primariesAt(role, now).length !== 1 || role.some((event) => event.event === "elected" && event.at > now - T));
    if (unsettled.length === 0) return;
    if (now > deadline) throw new Error(`${unsettled.length} roles not settled within ${timeoutMs} ms`);
    await sleep(250);
  }
}

/** A role's primary terms from its events: each election to its participant's next event (or `until`). */
function termsOf(role: readonly RoleEvent[], until: number): Span[] {
  return role.flatMap((event, index) => {
    if (event.event !== "elected") return [];
    const next = role.slice(index + 1).find((later) => later.participant === event.participant);
    return [{ participant: event.participant, term: event.term, from: event.at, to: next?.at ?? until }];
  });
}

interface Measured {
  readonly way: "rolling" | "restart-all";
  readonly fleet: FleetName;
  readonly rounds: number;
  readonly demotions: number;
  readonly roleMoves: number;
  /** Elections (each a new epoch) in the window, over every role. */
  readonly epochChanges: number;
  /** Seconds without a primary per role and round. */
  readonly lostS: Distribution;
  /** From the return (restart-all) to a primary, per role and round. */
  readonly toPrimaryMs: Distribution | undefined;
  /** `ridingThrough` events in the windows: a primary's deadline passed and it rode through. */
  readonly ridingThrough: number;
  /** Each round's window (Date.now()): from the first stop to T after the last start (rolling) or 3·T after the return. */
  readonly windows: readonly Window[];
}

interface Window {
  readonly from: number;
  /** restart-all: when the first instance listened again. */
  readonly returnAt?: number;
  readonly to: number;
}

function measure(fleet: FleetName, way: Measured["way"], windows: readonly Window[]): Measured {
  const roles = events.get(fleet)!;
  let demotions = 0;
  let moves = 0;
  let elections = 0;
  const lost: number[] = [];
  const toPrimary: number[] = [];
  for (const { from, returnAt, to } of windows) {
    for (const role of roles) {
      demotions += role.filter((event) => event.event === "demoted" && event.at > from && event.at <= to).length;
      const counted = roleMoves(role, from, to);
      moves += counted.moves;
      elections += counted.elections;
      // Periods of 0: a primary's term covers exactly its election to its demotion.
      lost.push(workLostMs(termsOf(role, to), from, to, 0) / 1000);
      if (returnAt !== undefined) toPrimary.push(untilPrimary(role, returnAt, to) ?? Number.POSITIVE_INFINITY);
    }
  }
  return {
    way,
    fleet,
    rounds: windows.length,
    demotions,
    roleMoves: moves,
    epochChanges: elections,
    lostS: distribution(lost),
    toPrimaryMs: windows.some((window) => window.returnAt !== undefined) ? distribution(toPrimary) : undefined,
    ridingThrough: ridingThrough.get(fleet)!.filter((at) => windows.some(({ from, to }) => at > from && at <= to)).length,
    windows,
  };
}

function machine(): string {
  const cpu = cpus();
  return `${type()} ${process.arch}, ${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

const work = mkdtempSync(join(tmpdir(), "ha-upgrade-"));
let store: StoreProcess | undefined;
let instances: ServiceInstances | undefined;
process.on("exit", () => {
  for (const child of fleetProcesses) child.child.kill("SIGKILL");
  instances?.killNow();
  store?.killNow();
  rmSync(work, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130));

const startedAt = Date.now();
const loadAtStart = loadavg()[0] ?? 0;
try {
  store = await startStoreProcess(values.store === "memory" ? "memory" : join(work, "store"));
  instances = new ServiceInstances(INSTANCES, { HA_TABLE_CONNECTION_STRING: store.connectionString, HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T), HA_DATA_DIR: "" }, (event) => {
    if (OUT !== undefined) appendFileSync(join(OUT, "events.jsonl"), `${JSON.stringify({ service: true, ...event })}\n`);
  }, OUT);
  await instances.startAll();
  const endpoints = instances.endpoints.join(",");
  log(`${INSTANCES} instances; fleets ${FLEETS.join(", ")} of ${PARTICIPANTS} participants × ${ROLES} roles, one after the other; I = ${I} ms, T = ${T} ms`);
  const measured: Measured[] = [];
  for (const fleet of FLEETS) {
    const fleetStart = fleetProcesses.length;
    startFleet(fleet, endpoints);
    await settled(fleet, 180_000);
    if (WAYS.includes("rolling")) {
      const windows: Window[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        await settled(fleet, 180_000);
        const from = Date.now();
        for (let index = 0; index < INSTANCES; index += 1) {
          await instances.stop(index, "SIGTERM");
          await instances.start(index);
          await instances.healthy(index);
        }
        // A demotion the restarts caused shows within T of the last one.
        await sleep(T);
        windows.push({ from, to: Date.now() });
        log(`${fleet}: rolling #${round + 1}: ${Math.round((Date.now() - from) / 1000)} s, load average ${loadavg()[0]?.toFixed(1)}`);
      }
      measured.push(measure(fleet, "rolling", windows));
    }
    if (WAYS.includes("restart-all")) {
      const windows: Window[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        await settled(fleet, 180_000);
        const startupMs = Math.min(...instances.startupMs.slice(-3 * INSTANCES));
        const from = Date.now();
        await instances.stopAll("SIGKILL");
        await sleep(from + Math.max(0, DOWN_MS - startupMs) - Date.now());
        const back = Math.min(...(await instances.startAll()));
        await sleep(back + 3 * T - Date.now());
        windows.push({ from, returnAt: back, to: Date.now() });
        log(`${fleet}: restart-all #${round + 1}: down ${back - from} ms, load average ${loadavg()[0]?.toFixed(1)}`);
      }
      measured.push(measure(fleet, "restart-all", windows));
    }
    // The fleet stops (each elector releases its roles) before the next one starts.
    const mine = fleetProcesses.slice(fleetStart);
    for (const child of mine) child.child.kill("SIGTERM");
    await Promise.all(mine.map((child) => (child.child.exitCode === null ? new Promise((done) => child.child.once("exit", done)) : undefined)));
  }

  const report = {
    command: `npm run bench -- upgrade ${process.argv.slice(2).join(" ")}`.trim(),
    machine: machine(),
    loadAverage: { start: loadAtStart, end: loadavg()[0] ?? 0, cores: cpus().length },
    durationS: Math.round((Date.now() - startedAt) / 1000),
    intervalMs: I,
    timeoutMs: T,
    instances: INSTANCES,
    participants: PARTICIPANTS,
    roles: ROLES,
    downMs: DOWN_MS,
    store: values.store,
    rideThroughMs: RIDE_THROUGH_MS,
    measured,
  };
  const table = [
    "| way | fleet | rounds | demotions | role moves | epoch changes | rode through | without a primary per role, s (median / max) | return → primary, ms (median / p99 / max) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...measured.map(
      (row) =>
        `| ${row.way} | ${row.fleet} | ${row.rounds} | ${row.demotions} | ${row.roleMoves} | ${row.epochChanges} | ${row.ridingThrough} | ${row.lostS.median.toFixed(1)} / ${row.lostS.max.toFixed(1)} | ${row.toPrimaryMs === undefined ? "—" : `${row.toPrimaryMs.median} / ${row.toPrimaryMs.p99} / ${row.toPrimaryMs.max}`} |`,
    ),
  ].join("\n");
  process.stdout.write(`${JSON.stringify(report)}\n\n${table}\n`);
  if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
} finally {
  for (const child of fleetProcesses) child.child.kill("SIGKILL");
  await instances?.stopAll("SIGTERM");
  await store?.stop();
}
