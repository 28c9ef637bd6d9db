import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, type CliEvent } from "../helpers/sdk-cli-process.js";
import { CLI_PATH, startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

const execFileAsync = promisify(execFile);

/**
 * Membership end to end with real processes: `ha-module serve` (the store embedded), real
 * `ha-module join` members and a `ha-module members --watch`, with small timings so that
 * the whole state machine runs in seconds. Bounds are loose for a loaded machine; the
 * measured times are printed (the figures in docs/membership.md come from these lines).
 */
const I = 500;
const T = 2500;
const TTL = 7500;
// Longer than a poll or two, so that a watcher sees memberLeaving before the sweeper removes the row.
const RETENTION = 2000;
const SWEEP_PERIOD = 1000;
const SERVICE_ENV = {
  HA_INTERVAL_MS: String(I),
  HA_TIMEOUT_MS: String(T),
  HA_MEMBER_TTL_MS: String(TTL),
  HA_MEMBER_RETENTION_MS: String(RETENTION),
  HA_SWEEP_SCHEDULE: "* * * * * *",
};
/** Room for a loaded 2-core machine on every bound. */
const SLACK = 2500;

const is = (event: string, member: string, session?: string) => (e: CliEvent): boolean => e.event === event && e["member"] === member && (session === undefined || e["session"] === session);

function membership(label: string, storeEnv: Record<string, string>, memberNames: string[]): { service: () => ServiceProcess; watcher: () => CliProcess; join: (member: string) => CliProcess; processes: CliProcess[] } {
  let service: ServiceProcess;
  let watcher: CliProcess;
  const processes: CliProcess[] = [];
  const group = `e2e-${label}`;
  const join = (member: string): CliProcess => {
    const process = new CliProcess(member, ["join", group, "--member", member, "--address", `${member}:5800`, "--endpoint", service.url]);
    processes.push(process);
    return process;
  };
  beforeAll(async () => {
    service = await startServiceProcess({ ...SERVICE_ENV, ...storeEnv });
    watcher = new CliProcess("watch", ["members", group, "--watch", "--endpoint", service.url]);
    processes.push(watcher);
    for (const member of memberNames) join(member);
  });
  afterAll(async () => {
    await Promise.all(processes.map((process) => process.kill()));
    await service?.stop();
  });
  return { service: () => service, watcher: () => watcher, join, processes };
}

/** SIGKILL `member`: the watcher must show unreachable, then leaving, then removed; returns the times from the kill. */
async function killAndWatch(watcher: CliProcess, member: CliProcess, name: string): Promise<{ unreachableMs: number; leavingMs: number; removedMs: number }> {
  const session = (await member.waitFor((e) => e.event === "joined"))["session"] as string;
  const from = watcher.events.length;
  const killedAt = performance.now();
  member.signal("SIGKILL");
  const unreachable = await watcher.waitFor(is("memberUnreachable", name, session), { from });
  const leaving = await watcher.waitFor(is("memberLeaving", name, session), { from });
  const removed = await watcher.waitFor(is("memberRemoved", name, session), { from });
  expect(unreachable).toMatchObject({ group: expect.any(String), session, address: `${name}:5800`, state: "unreachable", at: expect.any(String) });
  expect(removed["state"]).toBe("removed");
  const order = watcher.events.slice(from).filter((e) => e["member"] === name && e["session"] === session).map((e) => e.event);
  expect(order).toEqual(["memberUnreachable", "memberLeaving", "memberRemoved"]);
  return { unreachableMs: unreachable.receivedAt - killedAt, leavingMs: leaving.receivedAt - killedAt, removedMs: removed.receivedAt - killedAt };
}

// The Table and Cosmos suites run side by side, each with its own service, group and
// processes (most of their time is waiting for T and ttl); within a suite the tests run
// one after another, as written: each builds on the members the one before left.
describe("membership end to end on Table (embedded Azurite): three join processes and members --watch", { concurrent: true }, () => {
  describe.sequential("in order", () => tableSuite());
});

describe("membership end to end on Cosmos (the embedded emulator)", { concurrent: true }, () => {
  describe.sequential("in order", () => cosmosSuite());
});

describe("membership end to end on PostgreSQL (the embedded server)", { concurrent: true }, () => {
  describe.sequential("in order", () => postgresSuite());
});

function tableSuite(): void {
  const run = membership("table", {}, ["n1", "n2", "n3"]);

  it("every member joins: the watcher shows memberJoined, then memberActive, for each", async () => {
    for (const name of ["n1", "n2", "n3"]) {
      const joined = await run.watcher().waitFor(is("memberJoined", name));
      expect(joined).toMatchObject({ address: `${name}:5800`, session: expect.any(String) });
      await run.watcher().waitFor(is("memberActive", name, joined["session"] as string));
    }
  });

  it("members <group> prints a table (--json: the list), and members alone every group's counts", async () => {
    const cli = (...args: string[]) => execFileAsync(process.execPath, [CLI_PATH, "members", ...args, "--endpoint", run.service().url]);
    const table = (await cli("e2e-table")).stdout;
    expect(table.split("\n")[0]).toMatch(/^MEMBER\s+STATE\s+AGE\s+SESSION\s+ADDRESS$/);
    expect(table).toMatch(/^n1\s+active\s+\d+\.\ds\s+\S+\s+n1:5800$/m);
    const list = JSON.parse((await cli("e2e-table", "--json")).stdout) as { group: string; members: Array<{ member: string; state: string }>; ttlMs: number };
    expect(list).toMatchObject({ group: "e2e-table", intervalMs: I, timeoutMs: T, ttlMs: TTL });
    expect(list.members.map(({ member, state }) => `${member} ${state}`)).toEqual(["n1 active", "n2 active", "n3 active"]);
    expect((await cli()).stdout).toMatch(/^e2e-table\s+0\s+3\s+0\s+0$/m);
  });

  it("SIGKILL of a member: memberUnreachable after about T, memberLeaving after about ttl, then memberRemoved", async () => {
    const times = await killAndWatch(run.watcher(), run.processes.find((p) => p.name === "n1")!, "n1");
    console.log(`table: SIGKILL → memberUnreachable ${Math.round(times.unreachableMs)} ms, memberLeaving ${Math.round(times.leavingMs)} ms, memberRemoved ${Math.round(times.removedMs)} ms (I=${I} T=${T} ttl=${TTL} retention=${RETENTION} sweep=${SWEEP_PERIOD})`);
    expect(times.unreachableMs).toBeGreaterThan(T - I);
    expect(times.unreachableMs).toBeLessThan(T + I + SLACK);
    expect(times.leavingMs).toBeGreaterThan(TTL - I);
    expect(times.leavingMs).toBeLessThan(TTL + I + SLACK);
    expect(times.removedMs).toBeLessThan(TTL + RETENTION + SWEEP_PERIOD + I + SLACK);
  });

  it("a restart with a new session gets 409 SessionHeld while the old session is active, and joins once the old one, SIGKILLed, is unreachable", async () => {
    const old = run.processes.find((p) => p.name === "n2")!;
    const oldSession = (await old.waitFor((e) => e.event === "joined"))["session"] as string;
    const watcher = run.watcher();
    const from = watcher.events.length;
    // The new incarnation starts first, so that its join surely meets the old session alive
    // (a process start can take longer than T on a loaded machine).
    const restarted = run.join("n2");
    await restarted.waitForStderr(/409 SessionHeld: the member's previous session is still active/);
    expect(restarted.events.filter((e) => e.event === "joined")).toEqual([]);
    const killedAt = performance.now();
    old.signal("SIGKILL");
    const joined = await restarted.waitFor((e) => e.event === "joined");
    const newSession = joined["session"] as string;
    expect(newSession).not.toBe(oldSession);
    console.log(`table: SIGKILL of the old session → the waiting new session joined after ${Math.round(joined.receivedAt - killedAt)} ms (T=${T})`);
    expect(joined.receivedAt - killedAt).toBeGreaterThan(T - I);
    await watcher.waitFor(is("memberJoined", "n2", newSession), { from });
    // The old incarnation's failure is told, and before the new one joins.
    const told = watcher.events.slice(from).filter((e) => e["member"] === "n2").map((e) => `${e.event} ${e["session"] === oldSession ? "old" : "new"}`);
    expect(told.slice(0, told.indexOf("memberJoined new") + 1)).toEqual(["memberUnreachable old", "memberRemoved old", "memberJoined new"]);
  });

  it("SIGTERM of a member: it says goodbye, memberLeaving at once (not after ttl), and the process exits 0", async () => {
    const member = run.processes.find((p) => p.name === "n3")!;
    const session = (await member.waitFor((e) => e.event === "joined"))["session"] as string;
    const from = run.watcher().events.length;
    const termAt = performance.now();
    member.signal("SIGTERM");
    const leaving = await run.watcher().waitFor(is("memberLeaving", "n3", session), { from });
    console.log(`table: SIGTERM → memberLeaving ${Math.round(leaving.receivedAt - termAt)} ms`);
    // The goodbye is proven below (no memberUnreachable first); the time only has to beat
    // the silent path, which tells memberLeaving no sooner than ttl − I after the last beat.
    expect(leaving.receivedAt - termAt).toBeLessThan(TTL - I);
    expect(await member.exited).toEqual({ code: 0, signal: null });
    expect(run.watcher().events.slice(from).filter((e) => e["member"] === "n3" && e.event === "memberUnreachable")).toEqual([]);
  });
}

function cosmosSuite(): void {
  const run = membership("cosmos", { HA_STORE: "cosmos" }, ["c1", "c2"]);

  it("SIGKILL: unreachable, leaving, removed; SIGTERM: leaving at once and exit 0", async () => {
    for (const name of ["c1", "c2"]) await run.watcher().waitFor(is("memberActive", name));
    const times = await killAndWatch(run.watcher(), run.processes.find((p) => p.name === "c1")!, "c1");
    console.log(`cosmos: SIGKILL → memberUnreachable ${Math.round(times.unreachableMs)} ms, memberLeaving ${Math.round(times.leavingMs)} ms, memberRemoved ${Math.round(times.removedMs)} ms`);
    expect(times.unreachableMs).toBeGreaterThan(T - I);
    expect(times.unreachableMs).toBeLessThan(T + I + SLACK);
    const last = run.processes.find((p) => p.name === "c2")!;
    const from = run.watcher().events.length;
    last.signal("SIGTERM");
    await run.watcher().waitFor(is("memberLeaving", "c2"), { from });
    expect(await last.exited).toEqual({ code: 0, signal: null });
  });
}

function postgresSuite(): void {
  const run = membership("postgres", { HA_STORE: "postgres" }, ["p1", "p2"]);

  it("SIGKILL: unreachable, leaving, removed; SIGTERM: leaving at once and exit 0", async () => {
    for (const name of ["p1", "p2"]) await run.watcher().waitFor(is("memberActive", name));
    const times = await killAndWatch(run.watcher(), run.processes.find((p) => p.name === "p1")!, "p1");
    console.log(`postgres: SIGKILL → memberUnreachable ${Math.round(times.unreachableMs)} ms, memberLeaving ${Math.round(times.leavingMs)} ms, memberRemoved ${Math.round(times.removedMs)} ms`);
    expect(times.unreachableMs).toBeGreaterThan(T - I);
    expect(times.unreachableMs).toBeLessThan(T + I + SLACK);
    const last = run.processes.find((p) => p.name === "p2")!;
    const from = run.watcher().events.length;
    last.signal("SIGTERM");
    await run.watcher().waitFor(is("memberLeaving", "p2"), { from });
    expect(await last.exited).toEqual({ code: 0, signal: null });
  });
}
