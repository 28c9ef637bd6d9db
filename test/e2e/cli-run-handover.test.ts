import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning, realDelay, runCli } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * `ha-module handover <role> --to <standby>` with three real `run` supervisors
 * (docs/protocol.md#planned-handover): the primary's command gets SIGTERM, the grace, then
 * SIGKILL, all within its lease; only then is the lease released, and the named standby (not
 * the other one) starts its command under the next epoch.
 */
const I = 200;
const T = 6000;
const GRACE = 1500;

/** Ignores SIGTERM (saying so), so only the SIGKILL after the grace ends it. */
const STUBBORN = "process.on('SIGTERM', () => console.error('worker got SIGTERM')); console.error('worker up ' + process.env.HA_EPOCH); setInterval(() => {}, 1000);";

describe("ha-module handover with run supervisors", () => {
  let service: ServiceProcess;
  const runners: CliProcess[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    for (const runner of runners) await runner.kill();
    await service?.stop();
  });

  const runner = (name: string, utype = "e2e-handover"): CliProcess => {
    const made = new CliProcess(name, ["run", utype, "--endpoint", service.url, "--address", `${name}:1`, "--grace-ms", String(GRACE), "--", process.execPath, "-e", STUBBORN]);
    runners.push(made);
    return made;
  };

  /** The role's standbys as the service shows them. */
  async function standbysOf(utype: string): Promise<Array<{ uuid: string; address: string; seenAt: string }>> {
    const view = (await (await fetch(`${service.url}/primary/${utype}?standbys=true`)).json()) as { standbys?: Array<{ uuid: string; address: string; seenAt: string }> };
    return view.standbys ?? [];
  }

  /** Until the service shows `count` standbys of the role (each `run` announces itself as it polls). */
  async function standbysShown(count: number, utype = "e2e-handover"): Promise<Array<{ uuid: string; address: string; seenAt: string }>> {
    for (;;) {
      const standbys = await standbysOf(utype);
      if (standbys.length >= count) return standbys;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it("the named standby wins; the old command got SIGTERM, then SIGKILL after the grace, before the release", async () => {
    const a = runner("host-a");
    const started = await a.waitFor((e) => e.event === "started");
    await a.waitForStderr(new RegExp(`worker up ${started["epoch"] as number}`));
    const b = runner("host-b");
    const c = runner("host-c");
    const standbys = await standbysShown(2);
    expect(standbys.map((standby) => standby.address).sort()).toEqual(["host-b:1", "host-c:1"]);

    const unknown = await runCli(["handover", "e2e-handover", "--to", "host-z:1", "--endpoint", service.url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/--to "host-z:1" names no standby of e2e-handover seen within the last 3400 ms \(T\/2 \+ 2·I, at most T\); known: .*\(host-b:1\).*\(host-c:1\)|known: .*\(host-c:1\).*\(host-b:1\)/);

    const handedOver = await runCli(["handover", "e2e-handover", "--to", "host-c:1", "--endpoint", service.url]);
    expect(handedOver.code, handedOver.stderr).toBe(0);
    const cUuid = standbys.find((standby) => standby.address === "host-c:1")?.uuid;
    expect(JSON.parse(handedOver.stdout)).toMatchObject({ outcome: "requested", handover: { to: cUuid, phase: "pending" } });

    await a.waitFor((e) => e.event === "demoted" && e["reason"] === "handover");
    const exited = await a.waitFor((e) => e.event === "exited" && e["pid"] === started["pid"]);
    expect(exited).toMatchObject({ code: null, signal: "SIGKILL" });
    const stopping = /stopping the command \(process group \d+\): an operator asked for a planned handover[^;]*; (\d+) ms are left of the lease, which is released once the command is gone; SIGTERM now, SIGKILL in (\d+) ms\./.exec(a.stderr);
    expect(stopping, a.stderr).not.toBeNull();
    expect(Number(stopping![2])).toBeLessThanOrEqual(Math.min(GRACE, Number(stopping![1])));
    expect(a.stderr.indexOf("worker got SIGTERM")).toBeGreaterThan(a.stderr.indexOf("planned handover"));
    expect(a.stderr).not.toMatch(/lease deadline passed without word from its supervisor/);
    expect(isRunning(started["pid"] as number)).toBe(false);

    // The named standby takes over under the next epoch; the other one does not.
    const elected = await c.waitFor((e) => e.event === "elected");
    expect(elected["epoch"]).toBeGreaterThan(started["epoch"] as number);
    // Never two commands at once: the successor was elected only after the old command was gone.
    expect(Date.parse(String(elected["at"]))).toBeGreaterThanOrEqual(Date.parse(String(exited["at"])));
    await c.waitForStderr(new RegExp(`worker up ${elected["epoch"] as number}`));
    expect(b.events.some((e) => e.event === "elected")).toBe(false);
    // The old supervisor lives on, a standby again.
    expect(a.child.exitCode).toBeNull();
  }, 90_000);

  it("release is the graceful step-down: SIGTERM before SIGKILL within the lease, then a standby takes over at once", async () => {
    const utype = "e2e-release-run";
    const a = runner("rel-a", utype);
    const started = await a.waitFor((e) => e.event === "started");
    await a.waitForStderr(new RegExp(`worker up ${started["epoch"] as number}`));
    const b = runner("rel-b", utype);
    const released = await runCli(["release", utype, "--endpoint", service.url]);
    expect(released.code, released.stderr).toBe(0);
    expect(JSON.parse(released.stdout)).toMatchObject({ outcome: "requested", handover: { to: null, phase: "pending" } });
    expect(released.stderr).toMatch(new RegExp(`asked \\S+ \\(epoch ${started["epoch"] as number}\\) to step down: it stops its work at its next heartbeat`));
    await a.waitFor((e) => e.event === "demoted" && e["reason"] === "handover");
    const exited = await a.waitFor((e) => e.event === "exited" && e["pid"] === started["pid"]);
    expect(exited).toMatchObject({ signal: "SIGKILL" });
    expect(a.stderr.indexOf("worker got SIGTERM")).toBeGreaterThan(a.stderr.indexOf("planned handover"));
    expect(a.stderr).not.toMatch(/lease deadline passed without word from its supervisor/);
    const elected = await b.waitFor((e) => e.event === "elected");
    expect(elected["epoch"]).toBeGreaterThan(started["epoch"] as number);
    expect(Date.parse(String(elected["at"]))).toBeGreaterThanOrEqual(Date.parse(String(exited["at"])));
  }, 90_000);

  it("a standby whose run stopped is gone from primary and refused by handover --to at once; one killed is refused once past its announcement, naming when it was last seen", async () => {
    const utype = "e2e-gone";
    const a = runner("gone-a", utype);
    await a.waitFor((e) => e.event === "started");
    const b = runner("gone-b", utype);
    const c = runner("gone-c", utype);
    await standbysShown(2, utype);

    // b stops cleanly: it withdraws its row on the way out, so it is gone at once, not T (6 s) later.
    b.signal("SIGTERM");
    expect(await b.exited).toEqual({ code: 0, signal: null });
    const shown = await runCli(["primary", utype, "--endpoint", service.url]);
    expect(shown.code, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as { standbys: Array<{ address: string }> }).standbys.map((standby) => standby.address)).toEqual(["gone-c:1"]);
    const toStopped = await runCli(["handover", utype, "--to", "gone-b:1", "--endpoint", service.url]);
    expect(toStopped.code, toStopped.stderr).toBe(1);
    expect(toStopped.stderr).toMatch(/--to "gone-b:1" names no standby of e2e-gone seen within the last 3400 ms \(T\/2 \+ 2·I, at most T\); known: \S+ \(gone-c:1\)\. Nothing was changed\./);

    // c is killed (no clean stop, so no withdrawal) right after an announcement: its row stays
    // within T (6 s), but once it is T/2 + 2·I (3.4 s) old, c has missed an announcement.
    const before = (await standbysOf(utype)).find((standby) => standby.address === "gone-c:1")!;
    let announcedAt = before.seenAt;
    while (announcedAt === before.seenAt) {
      await realDelay(20);
      announcedAt = (await standbysOf(utype)).find((standby) => standby.address === "gone-c:1")?.seenAt ?? announcedAt;
    }
    c.signal("SIGKILL");
    await c.exited;
    await realDelay(Date.parse(announcedAt) + 4000 - Date.now());
    const toKilled = await runCli(["handover", utype, "--to", "gone-c:1", "--endpoint", service.url]);
    expect(Date.now() - Date.parse(announcedAt)).toBeLessThan(T);
    expect(toKilled.code, toKilled.stderr).toBe(1);
    expect(toKilled.stderr).toMatch(
      new RegExp(`--to "gone-c:1" names \\S+ \\(gone-c:1\\), a standby of e2e-gone last seen at ${announcedAt.replace(/\./g, "\\.")} \\(about \\d+\\.\\d s ago by this machine's clock\\)\\. A live standby announces itself every T/2, so one not seen within 3400 ms`),
    );
    expect(toKilled.stderr).toMatch(/Nothing was changed\./);

    // Neither handover was stored: a is primary all along, no step-down, no gap.
    expect(a.events.some((e) => e.event === "demoted")).toBe(false);
    const view = (await (await fetch(`${service.url}/primary/${utype}`)).json()) as { primary: { address: string } | null; handover: unknown };
    expect(view).toMatchObject({ primary: { address: "gone-a:1" }, handover: null });
  }, 90_000);
});
