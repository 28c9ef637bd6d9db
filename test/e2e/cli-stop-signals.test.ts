import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDelayingProxy, type DelayingProxy } from "../helpers/delaying-proxy.js";
import { CliProcess } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * Ctrl-C at the wrong moment must not leak a lease: every way `run` and `elect` end while
 * they may hold one releases it, with its token, before the process exits (docs/cli.md,
 * "Stopping"). Real processes; the wrong moments are made wide with a slow network.
 */
/**
 * T is long so that the slow answers below sit well inside an acquire's budget,
 * max(I, (T − I)/2) = 2900 ms, and well after the test's signal, on a busy machine too.
 */
const I = 200;
const T = 6000;
const SLOW_ANSWER_MS = 1500;

/** Ignores SIGTERM, so only a SIGKILL ends it. */
const STUBBORN = "process.on('SIGTERM', () => console.error('ignoring SIGTERM')); console.error('stubborn ready'); setInterval(() => {}, 1000);";

interface PrimaryAnswer {
  readonly primary: { uuid: string; revoked: boolean } | null;
  readonly epoch: number;
}

// The tests run side by side (each its own role, proxy and processes, on the one service):
// most of their time is waiting for held answers, graces and releases.
describe("ha-module run / elect: a stop signal never leaves a lease behind", { concurrent: true }, () => {
  let service: ServiceProcess;
  const processes: CliProcess[] = [];
  const proxies: DelayingProxy[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    await Promise.all(processes.map((cli) => cli.kill()));
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await service?.stop();
  });

  const start = (name: string, args: string[]): CliProcess => {
    const cli = new CliProcess(name, args);
    processes.push(cli);
    return cli;
  };
  const proxy = async (holds: Parameters<typeof startDelayingProxy>[1]): Promise<DelayingProxy> => {
    const started = await startDelayingProxy(service.url, holds);
    proxies.push(started);
    return started;
  };
  const primaryOf = async (utype: string): Promise<PrimaryAnswer> =>
    (await (await fetch(`${service.url}/primary/${utype}`, { signal: AbortSignal.timeout(10_000) })).json()) as PrimaryAnswer;
  const command = (name: "run" | "elect", utype: string, endpoint: string): string[] =>
    name === "run" ? ["run", utype, "--endpoint", endpoint, "--", process.execPath, "-e", STUBBORN] : ["elect", utype, "--endpoint", endpoint];

  it.each(["run", "elect"] as const)("%s: Ctrl-C while its acquire is in flight (applied, its answer 1.5 s away) exits 0 with the lease released, not left live or revoked", async (name) => {
    const utype = `e2e-sigint-acquiring-${name}`;
    const slow = await proxy({ PUT: { afterMs: SLOW_ANSWER_MS } });
    const cli = start(name, command(name, utype, slow.url));
    // The service has applied the acquire: the role is this uuid's, at its first epoch, until released.
    // (Its first PUT announces it as a standby and acquires nothing; the acquire follows.)
    await expect.poll(async () => (await primaryOf(utype)).primary, { timeout: 15_000, interval: 20 }).toMatchObject({ revoked: false });
    cli.signal("SIGINT");
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.events.filter((event) => event.event === "elected" || event.event === "started")).toEqual([]);
    expect(slow.served.filter((line) => line.startsWith("DELETE "))).toEqual([expect.stringMatching(/&lease=/)]);
    // Released, not revoked: no primary, and the role keeps the epoch of that one term.
    expect(await primaryOf(utype)).toMatchObject({ primary: null, epoch: expect.any(Number) });
    expect((await primaryOf(utype)).epoch).toBeGreaterThan(0);
  });

  it("run: a second Ctrl-C during the grace SIGKILLs the command at once, and run still prints exited, releases the lease and exits 0", async () => {
    const utype = "e2e-sigint-twice-run";
    const cli = start("run", command("run", utype, service.url));
    const started = await cli.waitFor((event) => event.event === "started");
    await cli.waitForStderr(/stubborn ready/);
    cli.signal("SIGINT");
    // The grace is (T − 2·I)/2 = 2800 ms: the command ignores the SIGTERM meanwhile.
    await cli.waitForStderr(/ignoring SIGTERM/);
    cli.signal("SIGINT");
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.events.find((event) => event.event === "exited")).toMatchObject({ pid: started["pid"], signal: "SIGKILL" });
    expect(cli.stderr).toMatch(/SIGINT again: the command gets SIGKILL now/);
    expect((await primaryOf(utype)).primary).toBeNull();
  });

  it("elect: a second Ctrl-C while its release is on its way still waits for the release, then exits 0", async () => {
    const utype = "e2e-sigint-twice-elect";
    // The DELETE is held 800 ms before it reaches the service, and dropped if elect is gone by then.
    const slow = await proxy({ DELETE: { beforeMs: 800 } });
    const cli = start("elect", command("elect", utype, slow.url));
    await cli.waitFor((event) => event.event === "elected");
    cli.signal("SIGINT");
    await cli.waitFor((event) => event.event === "demoted");
    cli.signal("SIGINT");
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(slow.served.filter((line) => line.startsWith("DELETE "))).toHaveLength(1);
    expect((await primaryOf(utype)).primary).toBeNull();
  });
});
