import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPartitionProxy, type PartitionProxy } from "../helpers/partition-proxy.js";
import { CliProcess, isRunning, realDelay, waitUntil } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * `ha-module run --ride-through` with real processes (docs/protocol.md#ride-through): the
 * holder keeps its command running, under the same epoch, through an outage of the service
 * three times T long (every `ha-module serve` SIGKILLed, then started again on the same port
 * and data), and stops it at once when its first answer after a partition is a refusal (a
 * standby, which could reach the service, took over meanwhile).
 */
const I = 200;
const T = 2000;
const UTYPE = "ride";
/** For a loaded 2-core machine's late timers and process starts: added to the protocol's bounds, never to the checks of who holds what. */
const SLACK_MS = 1000;

const WORKER = "console.error(`worker up epoch=${process.env.HA_EPOCH}`); setInterval(() => {}, 1000);";

describe("ha-module run --ride-through", () => {
  let dir: string;
  let port = 0;
  let service: ServiceProcess | undefined;
  let proxy: PartitionProxy | undefined;
  const runners: CliProcess[] = [];

  const serve = async (): Promise<ServiceProcess> => {
    service = await startServiceProcess({ PORT: String(port), HA_IN_MEMORY: "false", HA_DATA_DIR: dir, HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
    port = Number(new URL(service.url).port);
    return service;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ha-ride-"));
    await serve();
    proxy = await startPartitionProxy(service!.url);
  });

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.kill()));
    await proxy?.close();
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps its command through an outage of 3·T, the epoch unchanged, and stops it at once on a refusal", { timeout: 120_000 }, async () => {
    const holder = new CliProcess("holder", ["run", UTYPE, "--ride-through", "30s", "--endpoint", proxy!.url, "--address", "holder", "--", process.execPath, "-e", WORKER]);
    runners.push(holder);
    await holder.waitForStderr(/ride-through 30000 ms: .*The command must fence every write with HA_EPOCH/);
    const started = await holder.waitFor((event) => event.event === "started");
    const { epoch, pid } = started as unknown as { epoch: number; pid: number };
    const checkUrl = (await holder.waitForStderr(/CheckPrimary on (\S+)/))[1]!;
    const standby = new CliProcess("standby", ["run", UTYPE, "--endpoint", service!.url, "--address", "standby", "--", process.execPath, "-e", WORKER]);
    runners.push(standby);
    await standby.waitFor((event) => event.event === "primaryChanged" && (event["primary"] as { address?: string } | null)?.address === "holder");

    // 1. Every instance of the service gone for 3·T.
    const mark = holder.events.length;
    const gone = once(service!.child, "exit");
    service!.child.kill("SIGKILL");
    await gone;
    const riding = await holder.waitFor((event) => event.event === "ridingThrough", { from: mark, timeoutMs: 2 * T });
    expect(riding).toMatchObject({ epoch, leftMs: expect.any(Number) });
    expect(riding["leftMs"]).toBeGreaterThan(25_000);
    // Riding through, CheckPrimary does not count it as primacy: who asks there has no fencing token.
    expect(await checkPrimary(checkUrl)).toEqual({ status: 503, body: { isPrimary: false, ridingThrough: true } });
    await realDelay(3 * T);
    expect(isRunning(pid)).toBe(true);
    await serve();
    await realDelay(2 * T);
    // Through the whole outage: no demotion, no stop, the same command and epoch, the lease its own again.
    expect(holder.events.slice(mark).map((event) => event.event)).toEqual(["ridingThrough"]);
    expect(isRunning(pid)).toBe(true);
    expect(holder.stderr.match(/worker up/g)).toHaveLength(1);
    expect(await checkPrimary(checkUrl)).toEqual({ status: 200, body: { isPrimary: true, epoch } });
    expect(await primaryOf(service!.url)).toMatchObject({ address: "holder", epoch });
    expect(standby.events.filter((event) => event.event === "elected")).toEqual([]);

    // 2. The holder alone cut off: the standby, which still reaches the service, takes over at T.
    const cutMark = holder.events.length;
    proxy!.cut();
    await holder.waitFor((event) => event.event === "ridingThrough", { from: cutMark, timeoutMs: 2 * T });
    const elected = await standby.waitFor((event) => event.event === "elected", { timeoutMs: 3 * T });
    expect(elected["epoch"]).toBeGreaterThan(epoch);
    // Both commands run now, the rider's under the older epoch: what the fence is for.
    expect(isRunning(pid)).toBe(true);
    // The cut heals: the rider's first answer refuses it, and its command is SIGKILLed at once.
    const healedAt = performance.now();
    proxy!.heal();
    const demoted = await holder.waitFor((event) => event.event === "demoted", { from: cutMark, timeoutMs: 3 * T });
    expect(demoted).toMatchObject({ reason: "rejected", epoch });
    const exited = await holder.waitFor((event) => event.event === "exited", { from: cutMark });
    expect(exited).toMatchObject({ pid, signal: "SIGKILL" });
    const stoppedMs = exited.receivedAt - healedAt;
    console.log(`ride-through: the rider's command was stopped ${Math.round(stoppedMs)} ms after the cut healed`);
    expect(stoppedMs).toBeLessThan(2 * I + SLACK_MS);
    await waitUntil(() => !isRunning(pid), "the rider's command is gone");
    expect(await primaryOf(service!.url)).toMatchObject({ address: "standby", epoch: elected["epoch"] });
  });
});

async function primaryOf(endpoint: string): Promise<{ address: string; epoch: number } | null> {
  const response = await fetch(`${endpoint}/primary/${UTYPE}`, { signal: AbortSignal.timeout(10_000) });
  return ((await response.json()) as { primary: { address: string; epoch: number } | null }).primary;
}

async function checkPrimary(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: await response.json() };
}
