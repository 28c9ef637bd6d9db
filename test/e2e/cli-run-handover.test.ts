import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning, runCli } from "../helpers/sdk-cli-process.js";
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

  /** Until the service shows `count` standbys of the role (each `run` announces itself as it polls). */
  async function standbysShown(count: number): Promise<Array<{ uuid: string; address: string }>> {
    for (;;) {
      const view = (await (await fetch(`${service.url}/primary/e2e-handover?standbys=true`)).json()) as { standbys?: Array<{ uuid: string; address: string }> };
      if ((view.standbys?.length ?? 0) >= count) return view.standbys ?? [];
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it("the named standby wins; the old command got SIGTERM, then SIGKILL after the grace, before the release", async () => {
    const a = runner("host-a");
    const started = await a.waitFor((e) => e.event === "started");
    await a.waitForStderr(/worker up 1/);
    const b = runner("host-b");
    const c = runner("host-c");
    const standbys = await standbysShown(2);
    expect(standbys.map((standby) => standby.address).sort()).toEqual(["host-b:1", "host-c:1"]);

    const unknown = await runCli(["handover", "e2e-handover", "--to", "host-z:1", "--endpoint", service.url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/--to "host-z:1" names no standby of e2e-handover seen within T; known: .*\(host-b:1\).*\(host-c:1\)|known: .*\(host-c:1\).*\(host-b:1\)/);

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
    expect(elected).toMatchObject({ epoch: 2 });
    // Never two commands at once: the successor was elected only after the old command was gone.
    expect(Date.parse(String(elected["at"]))).toBeGreaterThanOrEqual(Date.parse(String(exited["at"])));
    await c.waitForStderr(/worker up 2/);
    expect(b.events.some((e) => e.event === "elected")).toBe(false);
    // The old supervisor lives on, a standby again.
    expect(a.child.exitCode).toBeNull();
  }, 90_000);

  it("release is the graceful step-down: SIGTERM before SIGKILL within the lease, then a standby takes over at once", async () => {
    const utype = "e2e-release-run";
    const a = runner("rel-a", utype);
    const started = await a.waitFor((e) => e.event === "started");
    await a.waitForStderr(/worker up 1/);
    const b = runner("rel-b", utype);
    const released = await runCli(["release", utype, "--endpoint", service.url]);
    expect(released.code, released.stderr).toBe(0);
    expect(JSON.parse(released.stdout)).toMatchObject({ outcome: "requested", handover: { to: null, phase: "pending" } });
    expect(released.stderr).toMatch(/asked \S+ \(epoch 1\) to step down: it stops its work at its next heartbeat/);
    await a.waitFor((e) => e.event === "demoted" && e["reason"] === "handover");
    const exited = await a.waitFor((e) => e.event === "exited" && e["pid"] === started["pid"]);
    expect(exited).toMatchObject({ signal: "SIGKILL" });
    expect(a.stderr.indexOf("worker got SIGTERM")).toBeGreaterThan(a.stderr.indexOf("planned handover"));
    expect(a.stderr).not.toMatch(/lease deadline passed without word from its supervisor/);
    const elected = await b.waitFor((e) => e.event === "elected");
    expect(elected).toMatchObject({ epoch: 2 });
    expect(Date.parse(String(elected["at"]))).toBeGreaterThanOrEqual(Date.parse(String(exited["at"])));
  }, 90_000);
});
