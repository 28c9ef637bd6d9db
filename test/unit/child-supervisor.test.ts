import { describe, expect, it } from "vitest";
import { ChildSupervisor, type CommandExit } from "../../shared/cli/supervise/child-supervisor.js";
import { FakeProcessGroups, type GroupBehaviour } from "../helpers/fake-process-groups.js";
import { FakeClock } from "../helpers/fake-clock.js";

const GRACE = 1500;
const POLL = 25;
const KILL_WAIT = 2000;
const LIFELINE_REPORT = 1000;

function setup(behaviour: GroupBehaviour = { onTerm: "exit" }) {
  const clock = new FakeClock();
  const groups = new FakeProcessGroups(clock);
  groups.behaviour = behaviour;
  const exits: (CommandExit & { at: number })[] = [];
  const events: { event: string; fields: Record<string, unknown>; at: number }[] = [];
  const notes: string[] = [];
  const supervisor = new ChildSupervisor({
    utype: "scheduler",
    command: "sh",
    args: ["-c", "work"],
    graceMs: GRACE,
    clock,
    groups,
    onExit: (exit) => exits.push({ ...exit, at: clock.now() }),
    printEvent: (event, fields) => events.push({ event, fields, at: clock.now() }),
    note: (text) => notes.push(text),
    pollMs: POLL,
    killWaitMs: KILL_WAIT,
    lifelineReportMs: LIFELINE_REPORT,
  });
  const t0 = clock.now();
  const start = (killBy = t0 + 4000): void => supervisor.start({ env: { HA_EPOCH: "7" }, term: "uuid-1#7", epoch: 7, killBy });
  const signalsAt = () => groups.signals.map((s) => [s.signal, s.at - t0]);
  return { clock, groups, supervisor, exits, events, notes, t0, start, signalsAt };
}

describe("ChildSupervisor: one command as a process group (fake clock, fake process groups)", () => {
  it("starts the command with a watchdog whose kill time is the lease deadline, and prints started", async () => {
    const { groups, supervisor, events, t0, start } = setup();
    start();
    expect(supervisor.state).toBe("running");
    expect(supervisor.term).toBe("uuid-1#7");
    expect(groups.last.env).toEqual({ HA_EPOCH: "7" });
    expect(groups.last.lifeline!.lastKillAt).toBe(t0 + 4000);
    // Let run only once its watchdog was started: a run killed in between leaves nothing running.
    expect(groups.last.releasedWithLifeline).toBe(true);
    expect(events).toEqual([{ event: "started", fields: { utype: "scheduler", pid: 101, epoch: 7, watchdog: 102 }, at: t0 }]);
    supervisor.keepUntil(t0 + 5000);
    expect(groups.last.lifeline!.lastKillAt).toBe(t0 + 5000);
  });

  it("stop(): SIGTERM to the group and EOF on stdin at once; a group that obeys is reported without SIGKILL", async () => {
    const { clock, groups, supervisor, exits, events, t0, start, signalsAt } = setup();
    start();
    supervisor.stop(t0 + 800, "test");
    expect(signalsAt()).toEqual([["SIGTERM", 0]]);
    expect(groups.last.stdinClosedAt).toBe(t0);
    // The watchdog gives this process one more grace to SIGKILL itself, never past the lease deadline.
    expect(groups.last.lifeline!.lastKillAt).toBe(t0 + 800 + GRACE);
    await clock.advance(0);
    expect(exits).toEqual([{ pid: 101, code: null, signal: "SIGTERM", exitCode: 128 + 15, requested: true, at: t0 }]);
    expect(events.at(-1)).toMatchObject({ event: "exited", fields: { pid: 101, code: null, signal: "SIGTERM" } });
    expect(groups.last.lifeline!.disarmed).toBe(true);
    expect(supervisor.state).toBe("idle");
    await clock.advance(5000);
    expect(signalsAt()).toEqual([["SIGTERM", 0]]);
  });

  it("SIGKILLs a group that ignores SIGTERM exactly at the kill time", async () => {
    const { clock, supervisor, exits, t0, start, signalsAt } = setup({ onTerm: "ignore" });
    start();
    supervisor.stop(t0 + 800, "test");
    await clock.advance(799);
    expect(signalsAt()).toEqual([["SIGTERM", 0]]);
    expect(exits).toEqual([]);
    await clock.advance(1);
    expect(signalsAt()).toEqual([["SIGTERM", 0], ["SIGKILL", 800]]);
    expect(exits).toMatchObject([{ signal: "SIGKILL", exitCode: 137, at: t0 + 800 }]);
  });

  it("`exited` waits until no member is left: the shell in front dies on SIGTERM, its child 300 ms later", async () => {
    const { clock, groups, supervisor, exits, events, t0, start } = setup({ onTerm: "leader-only", extraMembers: 1 });
    start();
    const idle = supervisor.whenIdle();
    let idleAt: number | undefined;
    void idle.then(() => (idleAt = clock.now()));
    supervisor.stop(t0 + 1500, "test");
    await clock.advance(299);
    expect(exits).toEqual([]);
    expect(events.map((e) => e.event)).toEqual(["started"]);
    groups.last.memberExits("member-1");
    await clock.advance(POLL);
    expect(exits).toMatchObject([{ signal: "SIGTERM", requested: true }]);
    expect(exits[0]!.at - t0).toBeLessThanOrEqual(300 + POLL);
    expect(idleAt).toBe(exits[0]!.at);
  });

  it("a kill time that has come means SIGKILL at once, without SIGTERM", async () => {
    const { clock, supervisor, exits, t0, start, signalsAt } = setup();
    start();
    supervisor.stop(t0, "the lease is gone");
    expect(signalsAt()).toEqual([["SIGKILL", 0]]);
    await clock.advance(0);
    expect(exits).toMatchObject([{ signal: "SIGKILL" }]);
  });

  it("the watchdog's kill time while stopping never passes the lease deadline", () => {
    const { groups, supervisor, t0, start } = setup({ onTerm: "ignore" });
    start(t0 + 2000);
    supervisor.stop(t0 + 1000, "test");
    expect(groups.last.lifeline!.lastKillAt).toBe(t0 + 2000);
  });

  it("a later stop() can bring the SIGKILL forward, never push it back", async () => {
    const { clock, groups, supervisor, t0, start, signalsAt } = setup({ onTerm: "ignore" });
    start();
    supervisor.stop(t0 + 1000, "first");
    supervisor.stop(t0 + 3000, "later");
    expect(groups.last.lifeline!.lastKillAt).toBe(t0 + 1000 + GRACE);
    await clock.advance(400);
    supervisor.stop(t0 + 600, "sooner");
    expect(groups.last.lifeline!.lastKillAt).toBe(t0 + 600 + GRACE);
    await clock.advance(200);
    expect(signalsAt()).toEqual([["SIGTERM", 0], ["SIGKILL", 600]]);
  });

  it("the leader exits on its own: the rest of the group is stopped within the grace and the lease, then its code is reported", async () => {
    const { clock, groups, supervisor, exits, t0, start, signalsAt } = setup({ onTerm: "ignore", extraMembers: 1 });
    start(t0 + 1000); // the lease has less left than the grace: it bounds the SIGKILL
    groups.last.leaderExits(3, null);
    await clock.advance(0);
    expect(signalsAt()).toEqual([["SIGTERM", 0]]);
    expect(exits).toEqual([]);
    await clock.advance(1000);
    expect(signalsAt()).toEqual([["SIGTERM", 0], ["SIGKILL", 1000]]);
    expect(exits).toMatchObject([{ code: 3, signal: null, exitCode: 3, requested: false }]);
    expect(supervisor.state).toBe("idle");
  });

  it("the leader exits on its own with nothing left behind: no signal at all", async () => {
    const { clock, groups, exits, start, signalsAt } = setup();
    start();
    groups.last.leaderExits(0, null);
    await clock.advance(0);
    expect(signalsAt()).toEqual([]);
    expect(exits).toMatchObject([{ code: 0, exitCode: 0, requested: false }]);
  });

  it("members that outlast SIGKILL (uninterruptible I/O) count as gone after the kill wait, with a note", async () => {
    const { clock, groups, supervisor, exits, notes, t0, start } = setup({ onTerm: "ignore", extraMembers: 1 });
    start();
    supervisor.stop(t0, "test");
    groups.last.members.add("stuck"); // SIGKILL cannot take it yet
    await clock.advance(KILL_WAIT - POLL);
    expect(exits).toEqual([]);
    await clock.advance(POLL);
    expect(exits).toHaveLength(1);
    expect(notes.at(-1)).toMatch(/still has members 2000 ms after SIGKILL/);
  });

  it("a watchdog that dies: the command is stopped (run then starts it again with a new one)", async () => {
    const { clock, groups, supervisor, exits, notes, t0, start, signalsAt } = setup({ onTerm: "ignore" });
    start(t0 + 4000);
    groups.last.lifeline!.die("SIGKILL");
    expect(notes.at(-1)).toMatch(/its watchdog died \(SIGKILL\)/);
    await clock.advance(GRACE);
    expect(signalsAt()).toEqual([["SIGTERM", 0], ["SIGKILL", GRACE]]);
    expect(exits).toMatchObject([{ requested: true }]);
    expect(supervisor.state).toBe("idle");
  });

  it("killed by its watchdog at the lease deadline while run was too starved to ask: the lease ended it, not the command", async () => {
    const { clock, groups, exits, t0, start, signalsAt } = setup();
    start(t0 + 1000);
    // run never called stop() (its event loop was starved); the watchdog fires at its kill time.
    await clock.advance(1000);
    groups.last.leaderExits(null, "SIGKILL");
    await clock.advance(0);
    expect(signalsAt()).toEqual([]);
    expect(exits).toMatchObject([{ signal: "SIGKILL", exitCode: 137, requested: true, at: t0 + 1000 }]);
  });

  it("killed by its watchdog at a kill time run had just moved on from: the lease ended it, though the leader's exit came first", async () => {
    // Found by `npm run chaos` (a 200-cycle run on a loaded machine): run, starved past the
    // lease deadline it had given the watchdog, woke up, processed a renewal answered in time
    // and moved the kill time on; the watchdog had already fired at the old one. run saw the
    // leader die before the watchdog's exit, called it the command's own exit, and exited 137.
    const { clock, groups, supervisor, exits, t0, start, signalsAt } = setup();
    start(t0 + 1000);
    await clock.advance(1000);
    supervisor.keepUntil(t0 + 2800);
    groups.last.leaderExits(null, "SIGKILL");
    await clock.advance(0);
    expect(exits).toEqual([]); // not decided before the watchdog has had its say
    await clock.advance(5);
    groups.last.lifeline!.firedAndExited();
    await clock.advance(0);
    expect(signalsAt()).toEqual([]);
    expect(exits).toMatchObject([{ signal: "SIGKILL", exitCode: 137, requested: true, at: t0 + 1005 }]);
  });

  it("a command SIGKILLed by someone else before the lease deadline has exited on its own, once its watchdog stayed quiet for the report wait", async () => {
    const { clock, groups, exits, t0, start } = setup();
    start(t0 + 1000);
    await clock.advance(999);
    groups.last.leaderExits(null, "SIGKILL");
    await clock.advance(LIFELINE_REPORT - 1);
    expect(exits).toEqual([]);
    await clock.advance(POLL);
    expect(exits).toMatchObject([{ signal: "SIGKILL", exitCode: 137, requested: false }]);
    expect(exits[0]!.at - t0).toBeGreaterThanOrEqual(999 + LIFELINE_REPORT);
  });

  it("a command that exits with a code before the lease deadline has exited on its own, at once", async () => {
    const { clock, groups, exits, t0, start } = setup();
    start(t0 + 1000);
    await clock.advance(500);
    groups.last.leaderExits(3, null);
    await clock.advance(0);
    expect(exits).toMatchObject([{ code: 3, exitCode: 3, requested: false, at: t0 + 500 }]);
  });

  it("a command that cannot start is reported as exit 127, with the reason", async () => {
    const { clock, groups, supervisor, exits, events, notes, start } = setup();
    groups.failSpawn = new Error("spawn nope ENOENT");
    start();
    await clock.advance(0);
    expect(exits).toMatchObject([{ pid: null, code: 127, exitCode: 127, requested: false }]);
    expect(events.map((e) => e.event)).toEqual(["exited"]);
    expect(notes).toEqual(["ha-module run: cannot run sh: spawn nope ENOENT"]);
    expect(supervisor.state).toBe("idle");
  });

  it("a command that exists but cannot be executed (EACCES) is reported as exit 126, as shells do", async () => {
    const { clock, groups, exits, start } = setup();
    groups.failSpawn = Object.assign(new Error("spawn ./job.sh EACCES"), { code: "EACCES" });
    start();
    await clock.advance(0);
    expect(exits).toMatchObject([{ pid: null, code: 126, exitCode: 126, requested: false }]);
  });
});
