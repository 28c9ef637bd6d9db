import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, realDelay, runCli } from "../helpers/sdk-cli-process.js";
import { checkRecordedResponses } from "../helpers/openapi-responses.js";
import { startRecordingProxy, type RecordingProxy } from "../helpers/recording-proxy.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/** `ha-module primary`, `release` and the shared flags, against the built service with an API key. */
describe("ha-module primary", () => {
  const KEY = "e2e-function-key";
  let served: ServiceProcess;
  // The CLI talks to the service through a recording proxy: every answer it gets is then
  // checked against the OpenAPI document (the last test).
  let service: RecordingProxy;
  let holder: CliProcess;

  beforeAll(async () => {
    served = await startServiceProcess({ HA_API_KEY: KEY, HA_INTERVAL_MS: "200", HA_TIMEOUT_MS: "2000" });
    service = await startRecordingProxy(served.url);
    holder = new CliProcess("holder", ["elect", "e2e-primary", "--address", "10.1.2.3:80"], { HA_ENDPOINT: service.url, HA_API_KEY: KEY });
    await holder.waitFor((e) => e.event === "elected");
  });

  afterAll(async () => {
    await holder?.kill();
    await service?.close();
    await served?.stop();
  });

  const run = runCli;

  it("prints GetPrimary of one utype as JSON, with the key from --key", async () => {
    const { code, stdout } = await run(["primary", "e2e-primary", "--endpoint", service.url, "--key", KEY]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ utype: "e2e-primary", primary: { address: "10.1.2.3:80", epoch: expect.any(Number) }, intervalMs: 200, timeoutMs: 2000 });
  });

  it("prints every live primary without a utype, with endpoint and key from HA_ENDPOINT / HA_API_KEY", async () => {
    const { code, stdout } = await run(["primary"], { HA_ENDPOINT: service.url, HA_API_KEY: KEY });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ primaries: [expect.objectContaining({ utype: "e2e-primary" })] });
  });

  it("shows the role's standbys, address, uuid and how long ago the service saw them, in the JSON and for people on stderr", async () => {
    const env = { HA_ENDPOINT: service.url, HA_API_KEY: KEY };
    const standby = new CliProcess("standby", ["elect", "e2e-primary", "--address", "10.1.2.4:80"], env);
    try {
      // A standby announces itself while it polls: wait until the service shows it.
      let uuid: string | undefined;
      for (let attempt = 0; attempt < 200 && uuid === undefined; attempt += 1) {
        const answer = await fetch(`${served.url}/primary/e2e-primary?standbys=true`, { headers: { "x-functions-key": KEY } });
        const view = (await answer.json()) as { standbys: { uuid: string; address: string | null }[] };
        uuid = view.standbys.find((seen) => seen.address === "10.1.2.4:80")?.uuid;
        if (uuid === undefined) await realDelay(100);
      }
      expect(uuid, "the standby was never shown by the service").toBeDefined();
      const { code, stdout, stderr } = await run(["primary", "e2e-primary"], env);
      expect(code).toBe(0);
      const view = JSON.parse(stdout) as { standbys: { uuid: string; address: string; seenAt: string }[]; handover: unknown; primary: { uuid: string; epoch: number } };
      expect(view.handover).toBeNull();
      expect(view.standbys).toContainEqual({ uuid, address: "10.1.2.4:80", seenAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) });
      expect(view.standbys.map((seen) => seen.uuid)).not.toContain(view.primary.uuid);
      expect(stderr).toMatch(new RegExp(`^e2e-primary: primary 10\\.1\\.2\\.3:80, uuid ${view.primary.uuid}, epoch ${view.primary.epoch}, lease left \\d+\\.\\d s\\.$`, "m"));
      const seen = new RegExp(`^ {2}standby 10\\.1\\.2\\.4:80, uuid ${uuid!}, seen (\\d+\\.\\d) s ago\\.$`, "m").exec(stderr);
      expect(seen, stderr).not.toBeNull();
      // Fresh standbys only: seen within T, on the service's clock.
      expect(Number(seen![1])).toBeLessThanOrEqual(2);
    } finally {
      await standby.kill();
    }
  });

  it("lists the roles that had a primary and have none now with --vacant, with since when", async () => {
    const env = { HA_ENDPOINT: service.url, HA_API_KEY: KEY };
    const leaver = new CliProcess("leaver", ["elect", "e2e-vacant"], env);
    await leaver.waitFor((e) => e.event === "elected");
    leaver.signal("SIGTERM"); // a graceful stop releases the lease
    expect(await leaver.exited).toEqual({ code: 0, signal: null });
    const live = await run(["primary"], env);
    expect((JSON.parse(live.stdout) as { primaries: { utype: string }[] }).primaries.map((view) => view.utype)).not.toContain("e2e-vacant");
    const withVacant = await run(["primary", "--vacant"], env);
    expect(withVacant.code).toBe(0);
    const vacant = (JSON.parse(withVacant.stdout) as { primaries: { utype: string }[] }).primaries.find((view) => view.utype === "e2e-vacant");
    expect(vacant).toMatchObject({ utype: "e2e-vacant", primary: null, epoch: expect.any(Number), vacantSince: expect.stringMatching(/Z$/) });
    expect((vacant as unknown as { epoch: number }).epoch).toBeGreaterThan(0);
  });

  it("a role without a live primary exits 3, still printing the view with the role's epoch", async () => {
    const { code, stdout } = await run(["primary", "e2e-nobody", "--endpoint", service.url, "--key", KEY]);
    expect(code).toBe(3);
    expect(JSON.parse(stdout)).toMatchObject({ utype: "e2e-nobody", primary: null, epoch: 0 });
  });

  it("a missing key exits 1 with the service's message and a hint about the key", async () => {
    const { code, stdout, stderr } = await run(["primary", "x", "--endpoint", service.url], { HA_API_KEY: "" });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/401 Unauthorized: Send the API key in the x-functions-key header/);
    expect(stderr).toMatch(/The function key is wrong or missing: pass --key KEY or set HA_API_KEY/);
    // The SDK's advice names its own option; the command line's names the flag.
    expect(stderr).toMatch(/Wrong or missing function key for .*: pass --key or set HA_API_KEY\./);
    expect(stderr).not.toMatch(/apiKey/);
  });

  it("an endpoint without /api exits 1 with a hint to add it", async () => {
    const { code, stderr } = await run(["primary", "x", "--endpoint", service.url.replace(/\/api$/, ""), "--key", KEY]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/404/);
    expect(stderr).toMatch(new RegExp(`Does your endpoint end in /api\\? .*e\\.g\\. ${service.url.replace(/[.]/g, "\\.")}`));
  });

  it.each([
    [["primary", "--nope"], /Unknown option '--nope'\.\n/],
    [["elect", "x", "--adress", "h"], /Unknown option '--adress'\. Did you mean --address\?\n/],
    [["run", "x", "--grace", "5", "--", "true"], /Unknown option '--grace'\. Did you mean --grace-ms\?\n/],
    [["run", "x", "--verbose", "--", "true"], /Unknown option '--verbose'\. An option for the command goes after --: ha-module run <utype> -- <command> --verbose\n/],
    [["primary", "a", "b"], /primary takes at most one utype/],
    [["primary", "bad utype"], /Expected `utype` to be 1–128 characters/],
    [["primary", "--endpoint", "localhost:7071"], /Expected `endpoint` to be an http\(s\) URL/],
    [["elect"], /elect takes exactly one utype \(got none\)/],
    [["elect", "x", "--check-port", "1"], /Unknown option '--check-port'/],
    [["primary", "x", "--address", "a"], /Unknown option '--address'/],
    [["run", "x", "--check-port", "-1", "--", "true"], /--check-port must be a port number from 0 to 65535 \(got "-1"\)/],
    [["elect", "x", "--timeout", "10"], /--timeout must be a duration with a unit, such as 500ms, 10s, 2m or 1m30s, or 0 \(got "10"\)/],
    [["primary", "--watch"], /primary --watch needs a utype/],
    [["primary", "x", "--vacant"], /--vacant is for the list \(no utype\)/],
    [["release", "x", "--lease", "t"], /--lease needs --uuid/],
    [["release", "x", "--uuid", "u", "--lease", "t", "--revoke"], /--revoke and --lease exclude each other/],
  ])("%j prints the message and the command's usage line, and exits 2", async (args, message) => {
    const { code, stdout, stderr } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).toMatch(new RegExp(`Usage: ha-module ${args[0]} `));
    expect(stdout).toBe("");
  });

  it("an unknown command prints every command and exits 2", async () => {
    const { code, stderr } = await run(["frobnicate"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown command "frobnicate"/);
    expect(stderr).toMatch(/Usage: ha-module <command>/);
  });

  it("primary --watch prints the first view and every change of holder as JSON lines, and exits 0 on SIGINT", async () => {
    const utype = "e2e-watch";
    const env = { HA_ENDPOINT: service.url, HA_API_KEY: KEY };
    const watcher = new CliProcess("watcher", ["primary", utype, "--watch"], env);
    try {
      await watcher.waitFor((e) => e.event === "primaryChanged");
      expect(watcher.events[0]).toMatchObject({ event: "primaryChanged", utype, primary: null, epoch: 0 });
      const candidate = new CliProcess("candidate", ["elect", utype, "--address", "10.9.9.9:1"], env);
      const elected = await candidate.waitFor((e) => e.event === "elected");
      const seen = await watcher.waitFor((e) => e["primary"] !== null, { from: 1 });
      expect(seen).toMatchObject({ primary: { uuid: elected["uuid"], address: "10.9.9.9:1", epoch: elected["epoch"] }, epoch: elected["epoch"] });
      candidate.signal("SIGTERM"); // released: the watcher sees no primary, and the epoch stays
      expect(await candidate.exited).toEqual({ code: 0, signal: null });
      const gone = await watcher.waitFor((e) => e["primary"] === null, { from: 2 });
      expect(gone).toMatchObject({ utype, epoch: elected["epoch"] });
      // Only changes are printed: renewals in between add nothing.
      expect(watcher.events.map((e) => (e["primary"] as { uuid?: string } | null)?.uuid ?? null)).toEqual([null, elected["uuid"], null]);
      watcher.signal("SIGINT");
      expect(await watcher.exited).toEqual({ code: 0, signal: null });
    } finally {
      await watcher.kill();
    }
  });

  it("release asks the live primary to step down gracefully (a handover to any); --revoke revokes it; a role with none exits 3", async () => {
    const utype = "e2e-release";
    const env = { HA_ENDPOINT: service.url, HA_API_KEY: KEY };
    const victim = new CliProcess("victim", ["elect", utype], env);
    try {
      const elected = await victim.waitFor((e) => e.event === "elected");
      const wrongUuid = await run(["release", utype, "--uuid", "someone-else"], env);
      expect(wrongUuid.code).toBe(1);
      expect(JSON.parse(wrongUuid.stdout)).toMatchObject({ outcome: "held", primary: { uuid: elected["uuid"] } });
      const next = new CliProcess("next", ["elect", utype], env);
      try {
        // `elect` announces itself as a standby: wait until the service shows it.
        for (;;) {
          const shown = (await (await fetch(`${service.url}/primary/${utype}?standbys=true`, { headers: { "x-functions-key": KEY } })).json()) as { standbys?: unknown[] };
          if ((shown.standbys?.length ?? 0) > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const graceful = await run(["release", utype], env);
        expect(graceful.code, graceful.stderr).toBe(0);
        expect(JSON.parse(graceful.stdout)).toMatchObject({ outcome: "requested", primary: { uuid: elected["uuid"], revoked: false }, handover: { to: null, phase: "pending" } });
        expect(graceful.stderr).toMatch(/asked \S+ \(epoch \d+\) to step down: it stops its work at its next heartbeat .* and releases the lease; a standby takes over at once/);
        await victim.waitFor((e) => e.event === "demoted" && e["reason"] === "handover" && e["uuid"] === elected["uuid"]);
        // It released with its token: the standby takes the role, and the old one does not win it back.
        const second = await next.waitFor((e) => e.event === "elected");
        expect(second["epoch"]).toBeGreaterThan(elected["epoch"] as number);

        const revoked = await run(["release", utype, "--revoke"], env);
        expect(revoked.code, revoked.stderr).toBe(0);
        expect(JSON.parse(revoked.stdout)).toMatchObject({ outcome: "revoked", primary: { uuid: second["uuid"], revoked: true }, epoch: second["epoch"] });
        expect(revoked.stderr).toMatch(/it steps down at its next heartbeat/);
        await next.waitFor((e) => e.event === "demoted" && e["reason"] === "revoked");
      } finally {
        await next.kill();
      }
    } finally {
      await victim.kill();
    }
    const none = await run(["release", "e2e-nobody"], env);
    expect(none.code).toBe(3);
    expect(JSON.parse(none.stdout)).toMatchObject({ outcome: "none", primary: null });
    const noneToHand = await run(["handover", "e2e-nobody"], env);
    expect(noneToHand.code).toBe(3);
    expect(JSON.parse(noneToHand.stdout)).toMatchObject({ outcome: "no-primary", primary: null });
  });

  it("every answer the CLI processes received is what the OpenAPI document says", async () => {
    const { checked, problems } = await checkRecordedResponses(served.url, { "x-functions-key": KEY });
    expect(problems).toEqual([]);
    // The holder's heartbeats, the polls of --watch and the one-shot commands' calls.
    expect(checked).toBeGreaterThan(10);
  });
});
