import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import type { PrimaryView } from "../../shared/sdk/index.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * docs/protocol.md#the-rule-server-side on a real `ha-module serve` (embedded Azurite): a frozen service must not apply,
 * on resuming, the heartbeats its clients had already given up on. The requests queued
 * during the freeze arrived a budget ago, so none of them is written; nobody's abandoned
 * renewal resurrects a lease (no answer after the resume shows the old holder), and the
 * next term has the next epoch. The holder here never comes back (its calls are the queued
 * ones), so the standby, which lost contact during the freeze, takes over once its hold-back
 * ends: at most T after the resume (docs/protocol.md#sticky-recovery).
 */
const I = 200;
const T = 3000;
const BUDGET = 500;
const FREEZE = T + 500;

describe("a service frozen with SIGSTOP longer than the request budget", () => {
  let service: ServiceProcess;
  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T), HA_STORE_TIMEOUT_MS: String(BUDGET) });
  });
  afterAll(async () => {
    if (service.child.exitCode === null) service.child.kill("SIGCONT");
    await service.stop();
  });

  const call = async (method: string, path: string, body?: object): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("applies none of the queued writes on resume, and a standby is elected at most T after it, with the next epoch", async () => {
    const utype = `stall-${Date.now()}`;
    const acquired = await call("PUT", `/primary/${utype}`, { uuid: "holder", address: "h:1" });
    expect(acquired.status).toBe(200);
    const lease = acquired.body["lease"] as string;
    const firstEpoch = (acquired.body["primary"] as { epoch: number }).epoch;

    const standby = new PrimaryElector({ utype, endpoint: service.url, address: "standby:1" });
    const elected: Array<{ at: number; epoch: number }> = [];
    const seen: Array<{ at: number; primary: PrimaryView | null }> = [];
    standby.on("elected", ({ epoch }) => void elected.push({ at: performance.now(), epoch }));
    standby.on("primaryChanged", ({ primary }) => void seen.push({ at: performance.now(), primary }));
    standby.start();
    await waitFor(() => seen.some((change) => change.primary?.uuid === "holder"), 10_000);

    service.child.kill("SIGSTOP");
    // Queued while frozen: the holder's renewals, and a release followed by a late renewal
    // of the same (now dead) incarnation. The holder gives up on all of them.
    const queued = [
      call("PUT", `/primary/${utype}`, { uuid: "holder", lease }),
      call("PUT", `/primary/${utype}`, { uuid: "holder", lease }),
      call("DELETE", `/primary/${utype}?uuid=holder&lease=${encodeURIComponent(lease)}`),
      call("PUT", `/primary/${utype}`, { uuid: "holder", lease }),
    ];
    await new Promise((resolve) => setTimeout(resolve, FREEZE));
    const resumedAt = performance.now();
    service.child.kill("SIGCONT");

    const answers = await Promise.all(queued);
    expect(answers.map((answer) => answer.status)).toEqual([503, 503, 503, 503]);
    for (const answer of answers) expect(answer.body).toEqual({ error: { code: "StoreUnavailable", message: "The lease store is unavailable; retry shortly." } });

    await waitFor(() => elected.length > 0, 10_000);
    await standby.stop();
    const electedAfterMs = elected[0]!.at - resumedAt;
    // The hold-back ends T after the standby's last failed call (sent before the resume), or
    // 2·I after its first answer if that is later; plus a busy machine's late timers.
    expect(electedAfterMs).toBeLessThan(T + 1000);
    // The next term: no phantom term under the dead uuid came in between.
    expect(elected[0]!.epoch).toBeGreaterThan(firstEpoch);
    const terms = ((await call("GET", `/primary/${utype}/history`)).body["terms"] as Array<{ epoch: number; uuid: string }>).map((term) => term.epoch);
    expect(terms).toEqual([elected[0]!.epoch, firstEpoch]);
    expect(seen.filter((change) => change.at > resumedAt && change.primary?.uuid === "holder")).toEqual([]);
    expect(service.output()).toMatch(/did not run for \d+ ms/);
  });
});

async function waitFor(condition: () => boolean, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
