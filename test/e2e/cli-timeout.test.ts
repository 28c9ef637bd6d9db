import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, runCli } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * What scripts get from `elect` and `run` besides events: --timeout (exit 4), try-once
 * (--timeout 0), and a command that cannot run refused before competing (127, 126), all
 * with real processes against the built service.
 */
describe("ha-module elect and run: --timeout, and a command checked before competing", () => {
  let service: ServiceProcess;
  let holder: CliProcess;
  let scratch: string;
  const HELD = "e2e-held";

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "ha-cli-timeout-"));
    service = await startServiceProcess({ HA_INTERVAL_MS: "200", HA_TIMEOUT_MS: "2000" });
    holder = new CliProcess("holder", ["elect", HELD, "--address", "10.0.0.1:1", "--endpoint", service.url]);
    await holder.waitFor((e) => e.event === "elected");
  });

  afterAll(async () => {
    await holder?.kill();
    await service?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  const env = (): Record<string, string> => ({ HA_ENDPOINT: service.url });
  const epochOf = async (utype: string): Promise<unknown> => ((await (await fetch(`${service.url}/primary/${utype}`)).json()) as { epoch: unknown }).epoch;

  it("--timeout 1s on a held role waits about a second, prints why, and exits 4 without being elected", async () => {
    const startedAt = performance.now();
    const { code, stdout, stderr } = await runCli(["elect", HELD, "--timeout", "1s"], env());
    const tookMs = performance.now() - startedAt;
    expect(code, stderr).toBe(4);
    expect(stderr).toMatch(/not elected for e2e-held within 1000 ms \(--timeout\); giving up/);
    expect(stdout).not.toMatch(/"event":"elected"/);
    expect(tookMs).toBeGreaterThanOrEqual(1000);
    console.log(`elect --timeout 1s: exited 4 after ${Math.round(tookMs)} ms (process start included)`);
  });

  it("a usage error found once the service has answered (a grace too long) exits 2 at once: --timeout does not keep it waiting", async () => {
    const { code, stderr } = await runCli(["run", "e2e-free-grace", "--timeout", "20s", "--grace-ms", "999999", "--", "true"], env());
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(/--grace-ms/);
    expect(stderr).toMatch(/Usage: ha-module run /);
    // Had it waited out the 20 s, it would also say it was not elected.
    expect(stderr).not.toMatch(/not elected/);
  });

  it("without --address, elect registers the host's name, as the SDK example does", async () => {
    const candidate = new CliProcess("no-address", ["elect", "e2e-no-address"], env());
    try {
      const seen = await candidate.waitFor((e) => e.event === "primaryChanged" && e["primary"] !== null);
      expect(seen["primary"]).toMatchObject({ address: hostname() });
    } finally {
      await candidate.kill();
    }
  });

  it("--timeout 0 tries once: a held role exits 4 at the first answer, naming the holder", async () => {
    const { code, stderr } = await runCli(["elect", HELD, "--timeout", "0"], env());
    expect(code, stderr).toBe(4);
    expect(stderr).toMatch(/e2e-held is held by \S+ at 10\.0\.0\.1:1 \(epoch \d+, \d+ ms left on its lease\); --timeout 0 tries once/);
  });

  it("--timeout 0 on a free role is elected, and then runs on until stopped", async () => {
    const elector = new CliProcess("once", ["elect", "e2e-free", "--timeout", "0"], env());
    try {
      await elector.waitFor((e) => e.event === "elected");
      elector.signal("SIGTERM");
      expect(await elector.exited).toEqual({ code: 0, signal: null });
    } finally {
      await elector.kill();
    }
  });

  it("run --timeout on a held role exits 4 and never starts the command", async () => {
    const { code, stdout, stderr } = await runCli(["run", HELD, "--timeout", "800ms", "--", process.execPath, "-e", "0"], env());
    expect(code, stderr).toBe(4);
    expect(stdout).not.toMatch(/"event":"started"/);
  });

  it("run refuses a command that is not found (127) or not executable (126) before competing: no epoch is spent", async () => {
    const notFound = await runCli(["run", "e2e-typo", "--", "no-such-command-anywhere-4711"], env());
    expect(notFound.code).toBe(127);
    expect(notFound.stderr).toMatch(/cannot run no-such-command-anywhere-4711: command not found on PATH/);
    const script = join(scratch, "job.sh");
    writeFileSync(script, "#!/bin/sh\nexit 0\n");
    chmodSync(script, 0o644);
    const notExecutable = await runCli(["run", "e2e-typo", "--", script], env());
    expect(notExecutable.code).toBe(126);
    expect(notExecutable.stderr).toMatch(/permission denied \(not executable\)/);
    for (const output of [notFound.stdout, notExecutable.stdout]) expect(output).toBe("");
    expect(await epochOf("e2e-typo")).toBe(0);
  });
});
