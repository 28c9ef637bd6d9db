import { describe, expect, it } from "vitest";
import { ALL_FAULTS, PARTICIPANT_FAULTS, SERVICE_FAULTS } from "./fault-plan.js";
import { parseChaosOptions } from "./options.js";
import { replayCommand } from "./summary.js";

/** `npm run chaos` options: checked where they enter, each refusal naming the option and what to change. */
describe("npm run chaos options", () => {
  it("defaults to 20 fast cycles of every fault the embedded store allows, with a fresh seed", () => {
    const options = parseChaosOptions([]);
    expect(options).toMatchObject({ cycles: 20, participants: 3, intervalMs: 200, timeoutMs: 2000, slackMs: 1000, store: "embedded", plant: undefined, keep: false, help: false });
    expect(options.faults).toEqual([...PARTICIPANT_FAULTS, ...SERVICE_FAULTS]);
    expect(Number.isSafeInteger(options.seed)).toBe(true);
  });

  it("--timing default is the service's own I and T; --store process adds the store faults; a seed replays", () => {
    const options = parseChaosOptions(["--timing", "default", "--store", "process", "--seed", "20261122", "--faults", "run-kill, store-stop,run-kill"]);
    expect(options).toMatchObject({ intervalMs: 1000, timeoutMs: 5000, store: "process", seed: 20261122, faults: ["run-kill", "store-stop"] });
    expect(parseChaosOptions(["--store", "process"]).faults).toEqual(ALL_FAULTS);
    expect(parseChaosOptions(["--plant", "two-services"]).faults).toEqual(PARTICIPANT_FAULTS);
  });

  it("--store postgres runs PostgreSQL as its own server, so the store faults come too", () => {
    const options = parseChaosOptions(["--store", "postgres", "--faults", "store-kill,store-stop,serve-kill"]);
    expect(options).toMatchObject({ store: "postgres", faults: ["store-kill", "store-stop", "serve-kill"] });
    // Every kind but the rollback, which puts a store's file back: PostgreSQL keeps a data directory.
    const postgresFaults = ALL_FAULTS.filter((kind) => kind !== "store-rollback");
    expect(parseChaosOptions(["--store", "postgres"]).faults).toEqual(postgresFaults);
    expect(parseChaosOptions(["--store", "postgres", "--plant", "escaped-worker"]).faults).toEqual(postgresFaults);
    expect(() => parseChaosOptions(["--store", "postgres", "--faults", "store-rollback"])).toThrow(/store-rollback needs a store kept in a file: the embedded store or --store process/);
  });

  it.each([
    [["--timeout-ms", "400"], /--timeout-ms \(400\) must be greater than 2 × --interval-ms \(200\)/],
    [["--cycles", "1.5"], /--cycles must be a whole number from 0 to 100000 \(got "1.5"\)/],
    [["--participants", "1"], /--participants must be a whole number from 2 to 16 \(got "1"\)/],
    [["--seed", "4294967296"], /--seed must be a whole number from 0 to 4294967295/],
    [["--timing", "slow"], /--timing must be fast or default \(got "slow"\)/],
    [["--store", "cosmos"], /--store must be embedded, process or postgres \(got "cosmos"\)/],
    [["--faults", "run-kill,pull-plug"], /--faults: unknown fault kind "pull-plug"; the kinds are group-kill, /],
    [["--faults", "store-kill"], /--faults: store-kill needs --store process or --store postgres \(the store is "embedded"\)/],
    [["--plant", "two-services", "--faults", "serve-kill"], /--faults: serve-kill needs one service \(not --plant two-services\)/],
    [["--plant", "two-services", "--store", "process"], /--plant two-services gives each service an embedded store of its own; leave out --store process/],
    [["--plant", "two-services", "--store", "postgres"], /--plant two-services gives each service an embedded store of its own; leave out --store postgres/],
    [["--plant", "typo"], /--plant must be escaped-worker, two-services or reused-epoch/],
    [["--cycle", "3"], /Unknown option '--cycle'/],
  ])("refuses %j", (args, message) => {
    expect(() => parseChaosOptions(args)).toThrow(message);
  });

  it.each(["process", "postgres"])("the replay command the summary prints gives back the same run (--store %s)", (store) => {
    const options = parseChaosOptions(["--timing", "default", "--store", store, "--cycles", "7", "--participants", "4", "--slack-ms", "1500", "--faults", "group-stop,store-kill", "--work-dir", "/tmp/x"]);
    const command = replayCommand(options);
    expect(command).toMatch(/^npm run chaos -- --seed \d+ /);
    const again = parseChaosOptions(command.split(" ").slice(4));
    expect(again).toEqual({ ...options, workDir: undefined });
  });

  it("--help asks for the usage", () => {
    expect(parseChaosOptions(["--help"]).help).toBe(true);
  });
});
