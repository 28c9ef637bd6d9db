import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

/** The bench's entry (docs/benchmarks.md), built (`npm test` builds before vitest runs). */
const BENCH = fileURLToPath(new URL("../../dist/bench/main.js", import.meta.url));

interface Distribution {
  readonly n: number;
  readonly min: number;
  readonly max: number;
}
interface GroupFigures {
  readonly group: string;
  readonly trials: number;
  readonly roleMoves: number;
  readonly epochChanges: Distribution;
  readonly lostS: Distribution;
  readonly noPrimary: number;
  readonly noWork: number;
}
interface Report {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly roles: number;
  readonly groups: readonly string[];
  readonly twoPrimaries: Record<string, number>;
  readonly lengths: readonly { lengthMs: number; trials: number; downMs: Distribution; outages: readonly { outageAt: number; endAt: number }[]; groups: readonly GroupFigures[] }[];
}

/**
 * `npm run bench -- outage --quick` end to end: Azurite, two `ha-module serve`, real `run`
 * processes and the seed and client-go participants, two outages for everyone. What is
 * asserted holds whatever the machine's load, and is recounted here from what the
 * participants themselves wrote (their event lines, their work lines), not taken from the
 * bench's own figures: no two primaries at once without ride-through, the role moves the
 * bench reports are the ones in the run processes' own events, and every role has a primary
 * again after each outage.
 */
describe("npm run bench -- outage --quick", () => {
  let out = "";
  afterAll(async () => {
    if (out !== "") await rm(out, { recursive: true, force: true });
  });

  it("measures outages for everyone and reports what the participants' own lines show", { timeout: 240_000 }, async () => {
    out = await mkdtemp(join(tmpdir(), "ha-outage-bench-"));
    const { stdout } = await promisify(execFile)(process.execPath, [BENCH, "outage", "--quick", "--out", out], { timeout: 220_000, maxBuffer: 20 * 2 ** 20 });
    const report = JSON.parse(await readFile(join(out, "report.json"), "utf8")) as Report;
    expect(report.groups).toEqual(expect.arrayContaining(["ours", "seed", "client-go"]));
    expect(report.lengths).toHaveLength(2);
    for (const length of report.lengths) {
      expect(length.downMs.n).toBe(length.trials);
      expect(length.downMs.min).toBeGreaterThan(0);
      for (const group of length.groups) {
        // After each outage every role had a primary again, at work, within the window.
        expect({ group: group.group, noPrimary: group.noPrimary, noWork: group.noWork }).toEqual({ group: group.group, noPrimary: 0, noWork: 0 });
      }
      // Ride-through (fenced work): through outages far shorter than it, the work never stops.
      const riding = length.groups.find((group) => group.group === "ours-ride-through");
      if (riding !== undefined) expect({ elections: riding.epochChanges.max, lostS: riding.lostS.max }).toEqual({ elections: 0, lostS: 0 });
    }
    expect(stdout).toContain("| ours |");

    // The work's own lines: never two runs of one role at once, for ours without ride-through.
    const files = await readdir(out);
    const oursLogs = files.filter((file) => /^work-ours-\d+\.log$/.test(file));
    expect(oursLogs).toHaveLength(report.roles);
    let runs = 0;
    for (const file of oursLogs) {
      const spans = new Map<string, { from: number; to: number }>();
      for (const text of (await readFile(join(out, file), "utf8")).split("\n")) {
        const [at, participant, epoch] = text.split(" ");
        if (epoch === undefined) continue;
        const span = spans.get(`${participant} ${epoch}`);
        if (span === undefined) spans.set(`${participant} ${epoch}`, { from: Number(at), to: Number(at) });
        else span.to = Math.max(span.to, Number(at));
      }
      const sorted = [...spans.values()].sort((a, b) => a.from - b.from);
      runs += sorted.length;
      for (let i = 1; i < sorted.length; i += 1) expect(sorted[i]!.from, file).toBeGreaterThan(sorted[i - 1]!.to);
    }
    expect(runs).toBeGreaterThanOrEqual(report.roles);
    expect(report.twoPrimaries["ours"]).toBe(0);

    // Role moves, recounted from the run processes' own `elected` lines in each outage's
    // window: a move is an election of another participant than the role's last holder.
    const events = (await readFile(join(out, "events.jsonl"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { group: string; utype: string; participant: string; event: string; at: string });
    const elections = events.filter((event) => event.group === "ours" && event.event === "elected");
    expect(elections.length).toBeGreaterThanOrEqual(report.roles);
    for (const length of report.lengths) {
      let moves = 0;
      for (const { outageAt, endAt } of length.outages) {
        for (const utype of new Set(elections.map((event) => event.utype))) {
          const mine = elections.filter((event) => event.utype === utype);
          let holder = mine.filter((event) => Date.parse(event.at) <= outageAt).at(-1)?.participant;
          for (const event of mine.filter((event) => Date.parse(event.at) > outageAt && Date.parse(event.at) <= endAt)) {
            if (holder !== undefined && event.participant !== holder) moves += 1;
            holder = event.participant;
          }
        }
      }
      expect({ lengthMs: length.lengthMs, moves }).toEqual({ lengthMs: length.lengthMs, moves: length.groups.find((group) => group.group === "ours")!.roleMoves });
    }
  });
});
