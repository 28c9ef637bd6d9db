/**
 * `npm run bench -- outage`: what an outage of the service for everyone costs the work it
 * guards, with real processes, side by side in one run. Several `ha-module serve` on one
 * Azurite (its own process), every participant listing them all; each outage stops every
 * instance (SIGKILL by default) and starts them again on the same ports after the outage's
 * length. Four groups of participants share each outage, each on roles of its own:
 *
 *   ours                `ha-module run <role> -- work`, as shipped (sticky recovery)
 *   ours-ride-through   the same with `--ride-through` (5 min by default): fenced work
 *   seed, client-go     the algorithms of bench/compare, each participant a process that
 *                       works while its algorithm says it is primary (outage/participant.ts)
 *
 * The work appends a line every 20 ms to its role's log (outage/work.ts). Per role and
 * outage, from the participants' own events and the work's own lines (outage/figures.ts):
 * role moves, epoch changes (elections), seconds without work, and the time from the
 * return (the first instance listening again) to a primary and to work. Needs `npm run build`.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, appendFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem, type } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { distribution, sleep, type Distribution } from "./compare/stats.js";
import { optionReaders, readArgs } from "./helpers/args.js";
import { startLineProcess, type Line, type LineProcess } from "./helpers/processes.js";
import { CLI, ServiceInstances, startStoreProcess, type StoreProcess } from "./helpers/service-instances.js";
import { overlaps, roleMoves, untilPrimary, untilWork, workLostMs, type RoleEvent } from "./outage/figures.js";
import { WatchedRole } from "./outage/roles.js";

const WORK = fileURLToPath(new URL("./outage/work.js", import.meta.url));
const PARTICIPANT = fileURLToPath(new URL("./outage/participant.js", import.meta.url));
/** The work writes a line this often (work.ts, participant.ts). */
const PERIOD_MS = 20;

const USAGE = `Usage: npm run bench -- outage [options]

Outages of the service for everyone (every \`ha-module serve\` instance stopped, then started
again on its port), side by side in one run for ours (\`ha-module run\`), ours with
--ride-through, and the seed and client-go algorithms: role moves, epoch changes, seconds of
work lost per role, and the time from the return to a primary, per outage length.

Options:
  --lengths LIST        outage lengths (default 2s,10s,60s,180s)
  --trials N            outages per length up to 30 s (default 34)
  --long-trials N       outages per length over 30 s (default 6)
  --instances N         serve instances on the one store (default 3)
  --roles N             roles per group (default 3)
  --participants N      participants per role (default 3)
  --interval-ms I       the service's I (default 1000)
  --timeout-ms T        the service's T (default 5000)
  --ride-through D      ours-ride-through's --ride-through (default 5m)
  --groups LIST         which of ours,ours-ride-through,seed,client-go (default all)
  --signal S            how instances are stopped: SIGKILL (default) or SIGTERM
  --window-ms W         watched after each return (default 3·T)
  --quick               a short run for the test suite: I = 250 ms, T = 1250 ms, 2 instances,
                        2 roles, 2 participants, one outage of T/2 and one of 3·T
  --out DIR             also write report.json, events.jsonl and the work logs there
  --json FILE           also write the report as JSON`;

const { values } = readArgs(USAGE, {
  lengths: { type: "string" },
  trials: { type: "string" },
  "long-trials": { type: "string" },
  instances: { type: "string" },
  roles: { type: "string" },
  participants: { type: "string" },
  "interval-ms": { type: "string" },
  "timeout-ms": { type: "string" },
  "ride-through": { type: "string", default: "5m" },
  groups: { type: "string", default: "ours,ours-ride-through,seed,client-go" },
  signal: { type: "string", default: "SIGKILL" },
  "window-ms": { type: "string" },
  quick: { type: "boolean", default: false },
  out: { type: "string" },
  json: { type: "string" },
});

const { usageError, whole, duration } = optionReaders(USAGE, values);

const QUICK = values.quick;
const I = whole("interval-ms", QUICK ? 250 : 1000);
const T = whole("timeout-ms", QUICK ? 1250 : 5000);
const LENGTHS = (values.lengths ?? (QUICK ? `${T / 2}ms,${3 * T}ms` : "2s,10s,60s,180s")).split(",").map((text) => duration("lengths", text.trim()));
const TRIALS = whole("trials", QUICK ? 1 : 34);
const LONG_TRIALS = whole("long-trials", QUICK ? 1 : 6);
const INSTANCES = whole("instances", QUICK ? 2 : 3);
const ROLES = whole("roles", QUICK ? 2 : 3);
const PARTICIPANTS = whole("participants", QUICK ? 2 : 3, 2);
const WINDOW_MS = whole("window-ms", 3 * T);
const RIDE_THROUGH = values["ride-through"];
const RIDE_THROUGH_MS = duration("ride-through", RIDE_THROUGH);
const SIGNAL = values.signal as NodeJS.Signals;
const GROUP_NAMES = ["ours", "ours-ride-through", "seed", "client-go"] as const;
type GroupName = (typeof GROUP_NAMES)[number];
const WANTED = values.groups.split(",").map((name) => name.trim());
if (T <= 2 * I) usageError(`Need T > 2·I (got I = ${I}, T = ${T}).`);
if (SIGNAL !== "SIGKILL" && SIGNAL !== "SIGTERM") usageError(`--signal must be SIGKILL or SIGTERM, got ${JSON.stringify(SIGNAL)}.`);
if (LENGTHS.some((length) => length < 1)) usageError("--lengths must all be longer than 0.");
if (WANTED.some((name) => !(GROUP_NAMES as readonly string[]).includes(name))) usageError(`--groups must be from ${GROUP_NAMES.join(",")}, got ${JSON.stringify(values.groups)}.`);

/** Whether this build's `run` takes --ride-through (the option came with sticky recovery). */
const RIDE_THROUGH_BUILT = spawnSync(process.execPath, [CLI, "run", "--help"], { encoding: "utf8" }).stdout.includes("--ride-through");
const GROUPS = WANTED.filter((name): name is GroupName => name !== "ours-ride-through" || RIDE_THROUGH_BUILT);
const log = (line: string): void => void process.stderr.write(`outage: ${line}\n`);
if (GROUPS.length < WANTED.length) log("this build's run has no --ride-through: ours-ride-through is left out");

interface Participant {
  readonly group: GroupName;
  readonly role: WatchedRole;
  readonly name: string;
  readonly process: LineProcess;
}

const work = mkdtempSync(join(tmpdir(), "ha-outage-"));
const out = values.out === undefined ? undefined : resolve(values.out);
if (out !== undefined) mkdirSync(out, { recursive: true });
const logs = out ?? work;
const eventsFile = join(logs, "events.jsonl");
writeFileSync(eventsFile, "");
// The work appends to its role's log: an --out that an earlier run wrote starts empty, or
// that run's lines would read as runs of this one's roles (two primaries that never were).
for (const name of readdirSync(logs)) if (/^work-.*\.log$/.test(name)) rmSync(join(logs, name));
const participants: Participant[] = [];
let store: StoreProcess | undefined;
let instances: ServiceInstances | undefined;
let finished = false;

const cleanUp = (): void => {
  for (const participant of participants) participant.process.child.kill("SIGKILL");
  instances?.killNow();
  store?.killNow();
  rmSync(work, { recursive: true, force: true });
};
process.on("exit", () => {
  if (!finished) cleanUp();
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130));

/** A participant's own event line, as a RoleEvent (run: ISO `at`, epoch; participant.js: ms `at`, uuid). */
function roleEvent(group: GroupName, name: string, line: Line): RoleEvent | undefined {
  if (line.event !== "elected" && line.event !== "demoted") return undefined;
  const at = typeof line["at"] === "number" ? line["at"] : Date.parse(String(line["at"]));
  const term = group === "ours" || group === "ours-ride-through" ? String(line["epoch"]) : String(line["uuid"]);
  return Number.isFinite(at) ? { at, participant: name, event: line.event, term } : undefined;
}

function startParticipant(group: GroupName, role: WatchedRole, name: string, endpoints: string): Participant {
  const child =
    group === "ours" || group === "ours-ride-through"
      ? startLineProcess(CLI, [
          "run",
          role.utype,
          "--endpoint",
          endpoints,
          "--address",
          name,
          "--check-port",
          "0",
          ...(group === "ours-ride-through" ? ["--ride-through", RIDE_THROUGH] : []),
          "--",
          process.execPath,
          WORK,
          role.log,
          name,
          String(PERIOD_MS),
        ])
      : startLineProcess(PARTICIPANT, [group, endpoints, role.utype, String(I), String(T), role.log, name]);
  child.onLine((line) => {
    appendFileSync(eventsFile, `${JSON.stringify({ group, utype: role.utype, participant: name, ...line })}\n`);
    const event = roleEvent(group, name, line);
    if (event !== undefined) role.events.push(event);
  });
  return { group, role, name, process: child };
}

/** Waits until every role has one primary at work and no recent election. */
async function settled(roles: readonly WatchedRole[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = Date.now();
    const unsettled = roles.filter((role) => !role.settled(now, 10 * PERIOD_MS + I, T));
    if (unsettled.length === 0) return;
    if (now > deadline) throw new Error(`not settled within ${timeoutMs} ms: ${unsettled.map((role) => role.utype).join(", ")}`);
    await sleep(200);
  }
}

interface RoleTrial {
  readonly moves: number;
  readonly elections: number;
  readonly lostMs: number;
  readonly toPrimaryMs: number | undefined;
  readonly toWorkMs: number | undefined;
}

interface GroupFigures {
  readonly group: GroupName;
  readonly trials: number;
  /** Role moves summed over the roles, per outage. */
  readonly movesPerOutage: readonly number[];
  readonly roleMoves: number;
  /** Elections (each a new epoch) per role and outage. */
  readonly epochChanges: Distribution;
  readonly lostS: Distribution;
  readonly toPrimaryMs: Distribution;
  readonly toWorkMs: Distribution;
  /** Role-outages with no primary (or no work) by the end of the window. */
  readonly noPrimary: number;
  readonly noWork: number;
}

interface LengthFigures {
  readonly lengthMs: number;
  readonly trials: number;
  /** From stopping the instances to the first one listening again, per outage. */
  readonly downMs: Distribution;
  /** Each outage's times (Date.now()): the stop, the return, the end of its window. */
  readonly outages: readonly { readonly outageAt: number; readonly returnAt: number; readonly endAt: number }[];
  readonly groups: readonly GroupFigures[];
}

function figuresOf(group: GroupName, trials: readonly RoleTrial[][]): GroupFigures {
  const all = trials.flat();
  const defined = (values: readonly (number | undefined)[]): number[] => values.filter((value): value is number => value !== undefined);
  return {
    group,
    trials: trials.length,
    movesPerOutage: trials.map((roles) => roles.reduce((sum, role) => sum + role.moves, 0)),
    roleMoves: all.reduce((sum, role) => sum + role.moves, 0),
    epochChanges: distribution(all.map((role) => role.elections)),
    lostS: distribution(all.map((role) => role.lostMs / 1000)),
    toPrimaryMs: distribution(defined(all.map((role) => role.toPrimaryMs))),
    toWorkMs: distribution(defined(all.map((role) => role.toWorkMs))),
    noPrimary: all.filter((role) => role.toPrimaryMs === undefined).length,
    noWork: all.filter((role) => role.toWorkMs === undefined).length,
  };
}

function machine(): string {
  const cpu = cpus();
  return `${type()} ${process.arch}, ${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

const startedAt = Date.now();
const loadAtStart = loadavg()[0] ?? 0;
try {
  store = await startStoreProcess(join(work, "store"));
  instances = new ServiceInstances(INSTANCES, {
    HA_TABLE_CONNECTION_STRING: store.connectionString,
    HA_INTERVAL_MS: String(I),
    HA_TIMEOUT_MS: String(T),
    HA_DATA_DIR: "",
  }, (event) => appendFileSync(eventsFile, `${JSON.stringify({ service: true, ...event })}\n`));
  await instances.startAll();
  const endpoints = instances.endpoints.join(",");
  log(`${INSTANCES} instances (${endpoints}) on Azurite; groups ${GROUPS.join(", ")}; I = ${I} ms, T = ${T} ms`);

  const roles = new Map<GroupName, WatchedRole[]>();
  for (const group of GROUPS) {
    const groupRoles = Array.from({ length: ROLES }, (_, index) => new WatchedRole(`outage-${group}-${index}`, join(logs, `work-${group}-${index}.log`)));
    roles.set(group, groupRoles);
    for (const role of groupRoles) {
      for (let index = 0; index < PARTICIPANTS; index += 1) participants.push(startParticipant(group, role, `p${index}`, endpoints));
    }
  }
  const everyRole = [...roles.values()].flat();
  await settled(everyRole, 120_000);
  log(`${participants.length} participants settled`);

  const results: LengthFigures[] = [];
  for (const lengthMs of LENGTHS) {
    const trials = lengthMs <= 30_000 ? TRIALS : LONG_TRIALS;
    const perGroup = new Map<GroupName, RoleTrial[][]>(GROUPS.map((group) => [group, []]));
    const downs: number[] = [];
    const outages: LengthFigures["outages"][number][] = [];
    for (let trial = 0; trial < trials; trial += 1) {
      await settled(everyRole, 120_000);
      // Started so that the first instance listens no sooner than `lengthMs` after the stop
      // (the quickest recent start taken off), or as soon as it can for an outage shorter
      // than a start: the outage measured (`down`) is at least its length.
      const startupMs = Math.min(...instances.startupMs.slice(-3 * INSTANCES));
      const outageAt = Date.now();
      await instances.stopAll(SIGNAL);
      await sleep(outageAt + Math.max(0, lengthMs - startupMs) - Date.now());
      const returnAt = Math.min(...(await instances.startAll()));
      const endAt = returnAt + WINDOW_MS;
      await sleep(endAt - Date.now());
      downs.push(returnAt - outageAt);
      outages.push({ outageAt, returnAt, endAt });
      const summary: string[] = [];
      for (const group of GROUPS) {
        const roleTrials = roles.get(group)!.map((role): RoleTrial => {
          role.refresh();
          const spans = role.spans();
          const { moves, elections } = roleMoves(role.events, outageAt, endAt);
          return {
            moves,
            elections,
            lostMs: workLostMs(spans, outageAt, endAt, PERIOD_MS),
            toPrimaryMs: untilPrimary(role.events, returnAt, endAt),
            toWorkMs: untilWork(spans, returnAt, endAt, PERIOD_MS),
          };
        });
        perGroup.get(group)!.push(roleTrials);
        const lost = roleTrials.map((role) => (role.lostMs / 1000).toFixed(1)).join("/");
        const toPrimary = roleTrials.map((role) => role.toPrimaryMs ?? "none").join("/");
        summary.push(`${group} moves ${roleTrials.reduce((sum, role) => sum + role.moves, 0)} lost ${lost} s to-primary ${toPrimary} ms`);
      }
      log(`${lengthMs} ms #${trial + 1}/${trials} (down ${returnAt - outageAt} ms): ${summary.join("; ")}`);
    }
    results.push({ lengthMs, trials, downMs: distribution(downs), outages, groups: GROUPS.map((group) => figuresOf(group, perGroup.get(group)!)) });
  }

  // Two primaries at once, over the whole run: without ride-through there must be none.
  const twoPrimaries = Object.fromEntries(GROUPS.map((group) => [group, roles.get(group)!.reduce((sum, role) => (role.refresh(), sum + overlaps(role.spans()).length), 0)]));
  const report = {
    command: `npm run bench -- outage ${process.argv.slice(2).join(" ")}`.trim(),
    machine: machine(),
    loadAverage: { start: loadAtStart, end: loadavg()[0] ?? 0, cores: cpus().length },
    durationS: Math.round((Date.now() - startedAt) / 1000),
    intervalMs: I,
    timeoutMs: T,
    instances: INSTANCES,
    roles: ROLES,
    participants: PARTICIPANTS,
    rideThroughMs: RIDE_THROUGH_MS,
    signal: SIGNAL,
    windowMs: WINDOW_MS,
    groups: GROUPS,
    twoPrimaries,
    lengths: results,
  };
  for (const participant of participants) participant.process.child.kill("SIGTERM");
  await Promise.all(participants.map((participant) => (participant.process.child.exitCode === null ? new Promise((done) => participant.process.child.once("exit", done)) : undefined)));

  const brief = (value: Distribution, digits = 0): string => (value.n === 0 ? "—" : `${value.median.toFixed(digits)} / ${value.p99.toFixed(digits)} / ${value.max.toFixed(digits)}`);
  const table = [
    `| outage (down median) | group | outages | role moves | epoch changes per role (mean) | work lost per role, s (median / p99 / max) | return → primary, ms (median / p99 / max) | return → work, ms (median / p99 / max) | no primary at the end |`,
    `| --- | --- | --- | --- | --- | --- | --- | --- | --- |`,
    ...results.flatMap((length) =>
      length.groups.map(
        (group) =>
          `| ${length.lengthMs / 1000} s (${(length.downMs.median / 1000).toFixed(1)} s) | ${group.group} | ${group.trials} | ${group.roleMoves} | ${(group.epochChanges.samples.reduce((a, b) => a + b, 0) / Math.max(1, group.epochChanges.n)).toFixed(2)} | ${brief(group.lostS, 1)} | ${brief(group.toPrimaryMs)} | ${brief(group.toWorkMs)} | ${group.noPrimary} |`,
      ),
    ),
  ].join("\n");
  process.stdout.write(`${JSON.stringify(report)}\n\n${table}\n\ntwo primaries at once (pairs of overlapping runs of the work): ${JSON.stringify(twoPrimaries)}\n`);
  if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  if (out !== undefined) writeFileSync(join(out, "report.json"), `${JSON.stringify(report, null, 2)}\n`);
} finally {
  for (const participant of participants) participant.process.child.kill("SIGKILL");
  await instances?.stopAll("SIGTERM");
  await store?.stop();
  finished = true;
  rmSync(work, { recursive: true, force: true });
}
