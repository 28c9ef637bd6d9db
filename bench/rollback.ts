/**
 * `npm run bench -- rollback`: a store that comes back without its last writes
 * (docs/design/epochs.md), builds side by side. Each tree's `ha-module serve` runs on its
 * embedded store on disk (Azurite, HA_DATA_DIR). Per round: electors of this build's SDK
 * (with ride-through, as fenced work runs) compete for a role; the store's file is copied
 * while the first holds it; then L terms end one after the other (each holder stops, a
 * standby takes over and works); then the service is SIGKILLed, its file put back as the copy
 * had it, and started again on the same port. Every primary writes to one fenced resource
 * every I/2 (the SDK's rule: refused below the highest epoch that wrote it).
 *
 * Per round, from this process's own clock and the electors' events:
 *   reused      epochs handed out after the return that were handed out before it (or lie
 *               at or below the highest before it: a fenced store refuses such a primary)
 *   overlap     how long two electors believed they were primary at once after the return
 *               (the erased term's holder until its next renewal: at most I + a round trip)
 *   stopped     time from the return to the erased term's holder's demotion (never: it
 *               worked on, under an epoch the store handed out again)
 *   accepted    time from the return to the first fenced write that the resource accepted
 *               from the primary the store names at the end of the window (never: that
 *               primary's writes were all refused, its epoch below one that wrote before)
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawn, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PrimaryElector } from "../shared/sdk/index.js";
import { distribution, sleep } from "./compare/stats.js";
import { optionReaders, readArgs } from "./helpers/args.js";
import { treesOf, type Tree } from "./helpers/trees.js";

const USAGE = `Usage: npm run bench -- rollback [options]

A store restored from a copy under running electors, losing L terms, builds side by side:
epochs handed out again, the overlap of two primaries after the return, and the time from
the return to a primary whose fenced writes are accepted.

Options:
  --tree [LABEL=]DIR   another build's checkout (built: its dist/ runs its serve); repeat for
                       more. This build is always measured, as "this".
  --lost LIST          terms lost per rollback (default 1,2,5)
  --rounds N           rollbacks per tree and L (default 5)
  --interval-ms I      the service's I (default 200)
  --timeout-ms T       the service's T (default 2000)
  --window-ms W        watched after each return (default 4·T)
  --json FILE          also write the report as JSON`;

const { values } = readArgs(USAGE, {
  tree: { type: "string", multiple: true, default: [] },
  lost: { type: "string", default: "1,2,5" },
  rounds: { type: "string" },
  "interval-ms": { type: "string" },
  "timeout-ms": { type: "string" },
  "window-ms": { type: "string" },
  json: { type: "string" },
});
const { usageError, whole } = optionReaders(USAGE, values);
const I = whole("interval-ms", 200);
const T = whole("timeout-ms", 2000);
const ROUNDS = whole("rounds", 5);
const WINDOW_MS = whole("window-ms", 4 * T);
const LOST = values.lost.split(",").map((text) => Number(text.trim()));
if (T <= 2 * I) usageError(`Need T > 2·I (got I = ${I}, T = ${T}).`);
if (LOST.some((lost) => !Number.isSafeInteger(lost) || lost < 1)) usageError(`--lost must list whole numbers of at least 1, got ${JSON.stringify(values.lost)}.`);

const THIS: Tree = { label: "this", dir: path.resolve(fileURLToPath(new URL("../..", import.meta.url))) };
const TREES = [THIS, ...treesOf(values.tree)];
const STORE_FILE = "__azurite_db_table__.json";
const log = (line: string): void => void process.stderr.write(`rollback: ${line}\n`);

/** One tree's `serve` on a durable data directory, on `port` (0: a free one). */
async function serve(tree: Tree, dataDir: string, port: number): Promise<{ url: string; port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(tree.dir, "dist/shared/cli/main.js"), "serve"], {
    env: { ...process.env, PORT: String(port), HA_IN_MEMORY: "false", HA_DATA_DIR: dataDir, HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const look = (chunk: Buffer): void => {
      out += chunk.toString();
      const found = /http:\/\/127\.0\.0\.1:\d+\/api/.exec(out);
      if (found) resolve(found[0]);
    };
    child.stdout!.on("data", look);
    child.stderr!.on("data", look);
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  return { url, port: Number(new URL(url).port), child };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await gone;
}

interface Elected {
  readonly at: number;
  readonly who: number;
  readonly epoch: number;
}

interface Round {
  /** Elections after the return whose epoch was handed out before it. */
  readonly repeated: number;
  /** Elections after the return at or below the highest epoch before it (a fenced store refuses them). */
  readonly reused: number;
  readonly overlapMs: number;
  /** Undefined: the erased term's holder never demoted within the window. */
  readonly stoppedMs: number | undefined;
  /** Undefined: no accepted write of the store's primary within the window. */
  readonly acceptedMs: number | undefined;
}

/** One rollback losing `lost` terms on `tree`. */
async function round(tree: Tree, lost: number, index: number): Promise<Round> {
  const dir = mkdtempSync(path.join(tmpdir(), "ha-rollback-bench-"));
  let service = await serve(tree, dir, 0);
  const utype = `rollback-${lost}-${index}`;
  const elected: Elected[] = [];
  /** Per elector, when it started and stopped believing it is primary (this process's clock). */
  const spans: Array<Array<{ from: number; to: number | undefined }>> = [];
  const writes: Array<{ at: number; uuid: string; epoch: number; accepted: boolean }> = [];
  const demotions: Array<{ at: number; who: number }> = [];
  let mark = 0;
  const electors = Array.from({ length: lost + 2 }, (_, who) => {
    const elector = new PrimaryElector({ utype, endpoint: service.url, address: `e${who}`, rideThroughMs: 30_000 });
    spans[who] = [];
    elector.on("elected", ({ epoch }) => {
      elected.push({ at: performance.now(), who, epoch });
      spans[who]!.push({ from: performance.now(), to: undefined });
    });
    elector.on("demoted", () => {
      demotions.push({ at: performance.now(), who });
      const open = spans[who]!.at(-1);
      if (open !== undefined && open.to === undefined) open.to = performance.now();
    });
    return elector;
  });
  // Fenced work: each primary writes every I/2 under its epoch; the resource keeps the highest.
  const work = setInterval(() => {
    for (const elector of electors) {
      const epoch = elector.epoch;
      if (epoch === undefined || !elector.isPrimary()) continue;
      const accepted = epoch >= mark;
      if (accepted) mark = epoch;
      writes.push({ at: performance.now(), uuid: elector.uuid, epoch, accepted });
    }
  }, I / 2);
  try {
    for (const elector of electors) elector.start();
    const waitElected = async (count: number): Promise<void> => {
      const deadline = performance.now() + 10 * T;
      while (elected.length < count && performance.now() < deadline) await sleep(10);
      if (elected.length < count) throw new Error(`no election ${count} within ${10 * T} ms`);
    };
    await waitElected(1);
    await sleep(2 * I);
    copyFileSync(path.join(dir, STORE_FILE), path.join(dir, `${STORE_FILE}.copy`));
    // L terms end after the copy: each holder stops, a standby takes over and works a while.
    for (let term = 0; term < lost; term++) {
      const holder = electors[elected.at(-1)!.who]!;
      await holder.stop();
      await waitElected(elected.length + 1);
      await sleep(2 * I);
    }
    const before = elected.map((e) => e.epoch);
    const erased = elected.at(-1)!.who;
    const highest = Math.max(...before);
    await kill(service.child);
    copyFileSync(path.join(dir, `${STORE_FILE}.copy`), path.join(dir, STORE_FILE));
    await sleep(I);
    service = await serve(tree, dir, service.port);
    const returnedAt = performance.now();
    await sleep(WINDOW_MS);
    const after = elected.filter((e) => e.at >= returnedAt);
    const reused = after.filter((e) => e.epoch <= highest).length;
    const repeated = after.filter((e) => before.includes(e.epoch)).length;
    // Overlap: the time after the return during which two or more believed at once.
    const edges = spans
      .flatMap((list) => list.map(({ from, to }) => ({ from: Math.max(from, returnedAt), to: to ?? performance.now() })))
      .filter(({ from, to }) => to > from)
      .flatMap(({ from, to }) => [
        { at: from, step: 1 },
        { at: to, step: -1 },
      ])
      .sort((a, b) => a.at - b.at || a.step - b.step);
    let believers = 0;
    let overlapMs = 0;
    let last = returnedAt;
    for (const { at, step } of edges) {
      if (believers >= 2) overlapMs += at - last;
      believers += step;
      last = at;
    }
    const stoppedAt = demotions.find((d) => d.who === erased && d.at >= returnedAt)?.at;
    const view = (await (await fetch(`${service.url}/primary/${utype}`)).json()) as { primary: { uuid: string; epoch: number } | null };
    const named = view.primary;
    const acceptedAt = named === null ? undefined : writes.find((w) => w.at >= returnedAt && w.accepted && w.uuid === named.uuid && w.epoch === named.epoch)?.at;
    return {
      repeated,
      reused,
      overlapMs,
      stoppedMs: stoppedAt === undefined ? undefined : stoppedAt - returnedAt,
      acceptedMs: acceptedAt === undefined ? undefined : acceptedAt - returnedAt,
    };
  } finally {
    clearInterval(work);
    await Promise.all(electors.map((elector) => elector.stop().catch(() => undefined)));
    await kill(service.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

const report: Array<{ tree: string; lost: number; rounds: Round[] }> = [];
for (const lost of LOST) {
  for (const tree of TREES) {
    const rounds: Round[] = [];
    for (let index = 0; index < ROUNDS; index++) {
      const result = await round(tree, lost, index);
      log(`${tree.label}, ${lost} lost, round ${index + 1}: epochs handed out again ${result.repeated}, at or below the highest before ${result.reused}, overlap ${Math.round(result.overlapMs)} ms, erased holder stopped ${result.stoppedMs === undefined ? "never" : `${Math.round(result.stoppedMs)} ms`}, accepted ${result.acceptedMs === undefined ? "never" : `${Math.round(result.acceptedMs)} ms`} after the return`);
      rounds.push(result);
    }
    report.push({ tree: tree.label, lost, rounds });
  }
}

const fmt = (values: readonly number[]): string => {
  if (values.length === 0) return "—";
  const d = distribution(values);
  return `${Math.round(d.median)} / ${Math.round(d.max)}`;
};
const lines = [
  `I = ${I} ms, T = ${T} ms, ${ROUNDS} rounds per row, window ${WINDOW_MS} ms after the return`,
  "",
  "| build | terms lost | epochs handed out again (elections after the return) | elections at or below the highest epoch before (refused by a fenced store) | overlap of two primaries after the return, ms (p50 / max) | return → the erased term's holder stops, ms (p50 / max; never: rounds without) | return → the store's primary's fenced write accepted, ms (p50 / max; never: rounds without) |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  ...report.map(({ tree, lost, rounds }) => {
    const some = (pick: (r: Round) => number | undefined): string => {
      const found = rounds.flatMap((r) => (pick(r) === undefined ? [] : [pick(r)!]));
      const never = rounds.length - found.length;
      return `${fmt(found)}${never > 0 ? `; never in ${never}` : ""}`;
    };
    const total = (pick: (r: Round) => number): number => rounds.reduce((sum, r) => sum + pick(r), 0);
    return `| ${tree} | ${lost} | ${total((r) => r.repeated)} in ${rounds.filter((r) => r.repeated > 0).length} of ${rounds.length} rounds | ${total((r) => r.reused)} in ${rounds.filter((r) => r.reused > 0).length} of ${rounds.length} rounds | ${fmt(rounds.map((r) => r.overlapMs))} | ${some((r) => r.stoppedMs)} | ${some((r) => r.acceptedMs)} |`;
  }),
];
process.stdout.write(`${lines.join("\n")}\n`);
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify({ I, T, rounds: ROUNDS, windowMs: WINDOW_MS, report }, null, 2)}\n`);
