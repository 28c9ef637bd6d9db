import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

/** The bench's entry (docs/benchmarks.md), built (`npm test` builds before vitest runs). */
const BENCH = fileURLToPath(new URL("../../dist/bench/main.js", import.meta.url));

interface Window {
  readonly from: number;
  readonly returnAt?: number;
  readonly to: number;
}
interface Measured {
  readonly way: "rolling" | "restart-all";
  readonly fleet: "default" | "ride-through";
  readonly rounds: number;
  readonly demotions: number;
  readonly roleMoves: number;
  readonly epochChanges: number;
  readonly ridingThrough: number;
  readonly lostS: { readonly max: number };
  readonly windows: readonly Window[];
}
interface Report {
  readonly instances: number;
  readonly participants: number;
  readonly roles: number;
  readonly measured: readonly Measured[];
}
/** A participant's own line (bench/outage/fleet.ts), as the bench wrote it to events.jsonl. */
interface ParticipantLine {
  readonly fleet: string;
  readonly participant: string;
  readonly event: string;
  readonly role: number;
  readonly reason?: string;
  readonly at: number;
}
/** An instance's stop asked, exit or start listening (bench/helpers/service-instances.ts). */
interface ServiceLine {
  readonly service: true;
  readonly instance: number;
  readonly event: "stopping" | "exited" | "listening";
  readonly at: number;
}

const inWindow = (at: number, { from, to }: Window): boolean => at > from && at <= to;
/**
 * An instance's line in a window: the bench takes the window's start just before its first
 * stop (the same millisecond, often), and the next round's start may be this one's end.
 */
const serviceInWindow = (at: number, { from, to }: Window): boolean => at >= from && at < to;

/**
 * One role's figures in one window, recounted from its participants' own `elected` and
 * `demoted` lines: demotions, elections, moves (an election of another participant than
 * the role's holder: the one elected last before), and whether it was ever without a
 * primary (no participant whose last line was `elected`) from the window's start to its end.
 */
function recount(lines: readonly ParticipantLine[], window: Window): { demotions: number; elections: number; moves: number; withoutPrimary: boolean } {
  const last = new Map<string, string>();
  let holder: string | undefined;
  for (const line of lines.filter((each) => each.at <= window.from)) {
    last.set(line.participant, line.event);
    if (line.event === "elected") holder = line.participant;
  }
  const primaries = (): number => [...last.values()].filter((event) => event === "elected").length;
  let withoutPrimary = primaries() === 0;
  let demotions = 0;
  let elections = 0;
  let moves = 0;
  for (const line of lines.filter((each) => inWindow(each.at, window))) {
    last.set(line.participant, line.event);
    if (line.event === "demoted") demotions += 1;
    if (line.event === "elected") {
      elections += 1;
      if (holder !== undefined && line.participant !== holder) moves += 1;
      holder = line.participant;
    }
    if (primaries() === 0) withoutPrimary = true;
  }
  return { demotions, elections, moves, withoutPrimary };
}

/**
 * `npm run bench -- upgrade --quick` end to end: Azurite, two `ha-module serve`, four
 * participant processes of four roles each (the SDK's PrimaryElector on one HaClient over
 * both instances), once as shipped and once with ride-through; a rolling restart and a
 * restart of every instance down for 3·T. What is asserted holds whatever the machine's
 * load (T = 5 s, and 16 electors a fleet), and is recounted from what the participants and
 * the instances themselves wrote, not taken from the bench's own figures: each round's
 * window holds the instances' own stops and starts as its way does them; a rolling restart
 * demotes no primary; a restart of every instance moves no role (sticky recovery) though
 * every primary's deadline passed; with ride-through no role has an election or a moment
 * without a primary; and the figures the bench reports are those of the participants' lines.
 */
describe("npm run bench -- upgrade --quick", () => {
  let out = "";
  afterAll(async () => {
    if (out !== "") await rm(out, { recursive: true, force: true });
  });

  it("measures a rolling restart and a restart of every instance, and reports what the participants' own lines show", { timeout: 360_000 }, async () => {
    out = await mkdtemp(join(tmpdir(), "ha-upgrade-bench-"));
    const { stdout } = await promisify(execFile)(process.execPath, [BENCH, "upgrade", "--quick", "--out", out, "--json", join(out, "report.json")], { timeout: 330_000, maxBuffer: 20 * 2 ** 20 });
    expect(stdout).toContain("| rolling | default |");
    const report = JSON.parse(await readFile(join(out, "report.json"), "utf8")) as Report;
    const rows = new Map(report.measured.map((row) => [`${row.way} ${row.fleet}`, row]));
    expect([...rows.keys()].sort()).toEqual(["restart-all default", "restart-all ride-through", "rolling default", "rolling ride-through"]);

    const lines = (await readFile(join(out, "events.jsonl"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((text) => JSON.parse(text) as ParticipantLine | ServiceLine);
    const service = lines.filter((line): line is ServiceLine => "service" in line);
    const participants = lines.filter((line): line is ParticipantLine => !("service" in line));
    const roleLines = (fleet: string, role: number): ParticipantLine[] =>
      participants.filter((line) => line.fleet === fleet && line.role === role && (line.event === "elected" || line.event === "demoted"));

    for (const row of report.measured) {
      expect(row.windows).toHaveLength(row.rounds);
      for (const window of row.windows) {
        // The window holds the instances' own stops and starts, as the way does them.
        const stops = service.filter((line) => line.event === "stopping" && serviceInWindow(line.at, window));
        const starts = service.filter((line) => line.event === "listening" && serviceInWindow(line.at, window));
        expect(stops.map((line) => line.instance).sort()).toEqual(Array.from({ length: report.instances }, (_, index) => index));
        expect(starts.map((line) => line.instance).sort()).toEqual(Array.from({ length: report.instances }, (_, index) => index));
        if (row.way === "rolling") {
          // One at a time: each instance listens again before the next is stopped.
          for (let index = 1; index < stops.length; index += 1) expect(stops[index]!.at).toBeGreaterThan(starts[index - 1]!.at);
        } else {
          // Every instance at once: none listening again until all were stopped.
          expect(Math.min(...starts.map((line) => line.at))).toBeGreaterThan(Math.max(...stops.map((line) => line.at)));
          expect(window.returnAt).toBe(Math.min(...starts.map((line) => line.at)));
        }
      }

      let demotions = 0;
      let elections = 0;
      let moves = 0;
      let without = 0;
      for (let role = 0; role < report.roles; role += 1) {
        for (const window of row.windows) {
          const counted = recount(roleLines(row.fleet, role), window);
          demotions += counted.demotions;
          elections += counted.elections;
          moves += counted.moves;
          if (counted.withoutPrimary) without += 1;
        }
      }
      // The bench's figures are the participants' own lines.
      expect({ row: `${row.way} ${row.fleet}`, demotions: row.demotions, elections: row.epochChanges, moves: row.roleMoves }).toEqual({ row: `${row.way} ${row.fleet}`, demotions, elections, moves });
      // A rolling restart demotes no primary; a restart of every instance moves no role.
      if (row.way === "rolling") expect({ row: `${row.way} ${row.fleet}`, demotions }).toEqual({ row: `${row.way} ${row.fleet}`, demotions: 0 });
      expect({ row: `${row.way} ${row.fleet}`, moves }).toEqual({ row: `${row.way} ${row.fleet}`, moves: 0 });
      if (row.fleet === "ride-through") {
        // Ride-through: no election, and never a moment without a primary.
        expect({ row: `${row.way}`, elections, without, lostS: row.lostS.max }).toEqual({ row: `${row.way}`, elections: 0, without: 0, lostS: 0 });
      }
    }

    // The restart of every instance was an outage past every primary's deadline: each
    // role's primary was demoted and elected again as shipped, and rode through with it.
    const restartAll = rows.get("restart-all default")!;
    expect(restartAll.epochChanges).toBe(report.roles * restartAll.rounds);
    const riding = rows.get("restart-all ride-through")!;
    const rodeThrough = participants.filter((line) => line.fleet === "ride-through" && line.event === "ridingThrough" && riding.windows.some((window) => inWindow(line.at, window)));
    expect(new Set(rodeThrough.map((line) => line.role)).size).toBe(report.roles);

    // Over the whole run, a primary was demoted only by an outage for everyone (as shipped)
    // or by its fleet's stop at the end.
    const outages = restartAll.windows;
    const otherDemotions = participants.filter(
      (line) => line.event === "demoted" && line.reason !== "stopped" && !(line.fleet === "default" && outages.some((window) => inWindow(line.at, window))),
    );
    expect(otherDemotions).toEqual([]);
  });
});
