import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning, realDelay, runCli } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * Priorities with real `run` supervisors and a real service (docs/protocol.md#priorities-and-preemption):
 * a crashed top holder's role goes to the priority-1 standby, not the priority-0 one; a
 * preferred candidate that comes back takes the role over after its hold-down, by a planned
 * handover: the holder's command stopped, then the release, then the preferred one's command
 * under the next epoch — never two commands at once.
 */
const I = 200;
const T = 2000;
const HOLD_MS = 3000;

const WORKER = "process.on('SIGTERM', () => { console.error('worker got SIGTERM'); process.exit(0); }); console.error('worker up ' + process.env.HA_EPOCH); setInterval(() => {}, 1000);";

describe("run --priority and --preempt-after", () => {
  let service: ServiceProcess;
  const runners: CliProcess[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    for (const runner of runners) await runner.kill();
    await service?.stop();
  });

  const runner = (name: string, utype: string, flags: string[] = [], env: Record<string, string> = {}): CliProcess => {
    const made = new CliProcess(name, ["run", utype, "--endpoint", service.url, "--address", `${name}:1`, "--grace-ms", "500", ...flags, "--", process.execPath, "-e", WORKER], env);
    runners.push(made);
    return made;
  };

  async function standbysShown(utype: string, count: number): Promise<Array<{ uuid: string; address: string; priority?: number }>> {
    for (;;) {
      const view = (await (await fetch(`${service.url}/primary/${utype}?standbys=true`)).json()) as { standbys?: Array<{ uuid: string; address: string; priority?: number }> };
      if ((view.standbys ?? []).length >= count) return view.standbys!;
      await realDelay(100);
    }
  }

  it("a crashed top holder's role goes to the priority-1 standby, never the priority-0 one", async () => {
    const utype = "e2e-priority-failover";
    const top = runner("top", utype, ["--priority", "2"]);
    const topElected = await top.waitFor((e) => e.event === "elected");
    await top.waitFor((e) => e.event === "started");
    // Started in both orders of arrival: the low one first, so that it is not merely the later poller.
    const low = runner("low", utype);
    await standbysShown(utype, 1);
    const mid = runner("mid", utype, [], { HA_PRIORITY: "1" });
    const standbys = await standbysShown(utype, 2);
    expect(standbys.map((standby) => [standby.address, standby.priority ?? 0]).sort()).toEqual([
      ["low:1", 0],
      ["mid:1", 1],
    ]);
    const killedAt = Date.now();
    top.signal("SIGKILL");
    const elected = await mid.waitFor((e) => e.event === "elected", { timeoutMs: 30_000 });
    // A new term's epoch: above the top's (docs/protocol.md: never reused, never lower).
    const epoch = elected["epoch"] as number;
    expect(epoch).toBeGreaterThan(topElected["epoch"] as number);
    // Within T + I of the kill (the top's last renewal came before it), with a second of slack for a loaded machine.
    expect(Date.parse(String(elected["at"])) - killedAt).toBeLessThan(T + I + 1000);
    await mid.waitForStderr(new RegExp(`worker up ${epoch}\\b`));
    await realDelay(2 * T);
    expect(low.events.some((e) => e.event === "elected")).toBe(false);
    const shown = await runCli(["primary", utype, "--endpoint", service.url]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ primary: { address: "mid:1", priority: 1 } });
    expect(shown.stderr).toMatch(new RegExp(`primary mid:1, uuid \\S+, epoch ${epoch}, priority 1,`));
  }, 90_000);

  it("a preferred candidate that comes back takes the role over after its hold-down: the holder's command stops first, demoted preempted; never two commands", async () => {
    const utype = "e2e-priority-preempt";
    const fallback = runner("head-2", utype);
    const firstElected = await fallback.waitFor((e) => e.event === "elected");
    const firstEpoch = firstElected["epoch"] as number;
    const firstStart = await fallback.waitFor((e) => e.event === "started");
    await fallback.waitForStderr(new RegExp(`worker up ${firstEpoch}\\b`));
    const returnedAt = Date.now();
    const preferred = runner("head-1", utype, ["--priority", "1", "--preempt-after", `${HOLD_MS / 1000}s`]);
    const elected = await preferred.waitFor((e) => e.event === "elected", { timeoutMs: 30_000 });
    // Not before its hold-down; within the hold-down and a few intervals (a loaded machine's slack).
    expect(Date.parse(String(elected["at"])) - returnedAt).toBeGreaterThanOrEqual(HOLD_MS);
    expect(Date.parse(String(elected["at"])) - returnedAt).toBeLessThan(HOLD_MS + 2 * I + 2000);
    const epoch = elected["epoch"] as number;
    expect(epoch).toBeGreaterThan(firstEpoch);
    const demoted = await fallback.waitFor((e) => e.event === "demoted");
    expect(demoted).toMatchObject({ reason: "preempted", epoch: firstEpoch });
    const exited = await fallback.waitFor((e) => e.event === "exited" && e["pid"] === firstStart["pid"]);
    // The old command was gone before the new primary was elected.
    expect(Date.parse(String(elected["at"]))).toBeGreaterThanOrEqual(Date.parse(String(exited["at"])));
    expect(isRunning(firstStart["pid"] as number)).toBe(false);
    expect(fallback.stderr).toMatch(/a standby of higher priority asked for the role after its hold-down/);
    await preferred.waitForStderr(new RegExp(`worker up ${epoch}\\b`));
    // The term history says how the term ended.
    const history = (await (await fetch(`${service.url}/primary/${utype}/history`)).json()) as { terms: Array<{ epoch: number; endedBy: string | null }> };
    expect(history.terms.map((term) => [term.epoch, term.endedBy])).toEqual([
      [epoch, null],
      [firstEpoch, "preempted"],
    ]);
    // head-2 stands by and never takes it back: its priority is lower.
    await realDelay(HOLD_MS + T);
    expect(fallback.events.filter((e) => e.event === "elected")).toHaveLength(1);
    expect(fallback.child.exitCode).toBeNull();
  }, 90_000);

  it("refuses a bad --priority or HA_PREEMPT_AFTER with exit 2, naming it", async () => {
    const bad = await runCli(["run", "e2e-priority-bad", "--endpoint", service.url, "--priority", "high", "--", process.execPath, "-e", ""]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--priority must be an integer from -1000000 to 1000000/);
    const badEnv = await runCli(["elect", "e2e-priority-bad", "--endpoint", service.url], { HA_PREEMPT_AFTER: "30" });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toMatch(/HA_PREEMPT_AFTER must be a duration with a unit, such as 30s or 2m, or off/);
  }, 30_000);
});
