/**
 * Grants with real processes: `ha-module serve` checking tokens of a local Entra stand-in
 * and named keys, and `ha-module run` supervisors that authenticate as two managed
 * identities (their tokens from a fake App Service identity endpoint, IDENTITY_ENDPOINT, made
 * here). The one outside the role's grant is refused with 403 and never runs its command,
 * even with the role free; the granted one is elected and runs it.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantSettings, HEAD_A, HEAD_B, KEYS } from "../helpers/grants-fixture.js";
import { LocalIssuer, TEST_AUDIENCE } from "../helpers/local-issuer.js";
import { startRecordingProxy } from "../helpers/recording-proxy.js";
import { CliProcess, realDelay, runCli } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/** Writes its marker file (proof that it ran), then waits for SIGTERM. */
const COMMAND = "require('node:fs').writeFileSync(process.argv[1], 'ran'); process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 1000);";
const IDENTITY_HEADER = "identity-header-of-this-test";

const I = 200;
const T = 2000;

let issuer: LocalIssuer;
let identityEndpoint: Server;
let identityUrl: string;
let service: ServiceProcess;
let dir: string;
const processes: CliProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "ha-grants-"));
  issuer = await LocalIssuer.start();
  // App Service's identity endpoint, one path per machine: the token of that machine's identity for the asked resource.
  identityEndpoint = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    const who = url.pathname === "/a" ? HEAD_A : url.pathname === "/b" ? HEAD_B : undefined;
    if (who === undefined || request.headers["x-identity-header"] !== IDENTITY_HEADER) {
      response.writeHead(400, { "content-type": "application/json" }).end('{"error":"bad request"}');
      return;
    }
    const token = issuer.token(who, { claims: { aud: url.searchParams.get("resource") } });
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ access_token: token, expires_on: String(Math.floor(Date.now() / 1000) + 3600) }));
  });
  await new Promise<void>((resolve) => identityEndpoint.listen(0, "127.0.0.1", resolve));
  identityUrl = `http://127.0.0.1:${(identityEndpoint.address() as AddressInfo).port}`;
  service = await startServiceProcess({ ...grantSettings(issuer.authority), HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((running) => running.kill()));
  await service?.stop();
  await new Promise<void>((resolve) => (identityEndpoint ? identityEndpoint.close(() => resolve()) : resolve()));
  await issuer?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The environment of a machine whose managed identity is served at `/a` or `/b`. */
function machine(which: "a" | "b"): Record<string, string> {
  return {
    HA_ENDPOINT: service.url,
    HA_API_KEY: "",
    HA_AUTH: "managed-identity",
    HA_AUTH_AUDIENCE: TEST_AUDIENCE,
    IDENTITY_ENDPOINT: `${identityUrl}/${which}`,
    IDENTITY_HEADER,
  };
}

describe("ha-module run with two identities and grants", () => {
  it("the identity outside the role's grant is refused with 403 and never runs its command; the granted one runs it", async () => {
    const markerB = path.join(dir, "b-ran");
    const refused = await runCli(["run", "cluster-a.scheduler", "--exit-on-auth-error", "--", process.execPath, "-e", COMMAND, markerB], machine("b"), 60_000);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr.split("\n")[0]).toMatch(/^ha-module run: authenticating to http:\/\/127\.0\.0\.1:\d+\/api as managed identity \(system-assigned\) \(App Service identity endpoint\) for api:\/\/ha-module-test$/);
    expect(refused.stderr).toMatch(new RegExp(`403 Forbidden: The identity ${HEAD_B.oid} .* may not hold or release the role "cluster-a\\.scheduler"`));
    expect(refused.stderr).toMatch(/none of its grants \(HA_GRANTS\) lets it write this role or group/);
    expect(refused.stdout).not.toMatch(/"started"/);
    expect(existsSync(markerB)).toBe(false);

    // The same with head B's key: refused alike.
    const byKey = await runCli(["run", "cluster-a.scheduler", "--exit-on-auth-error", "--", process.execPath, "-e", COMMAND, markerB], { HA_ENDPOINT: service.url, HA_API_KEY: KEYS["head-b"], HA_AUTH: "key" }, 60_000);
    expect(byKey.code, byKey.stderr).toBe(1);
    expect(byKey.stderr.split("\n")[0]).toMatch(/authenticating to .* as a function key$/);
    expect(byKey.stderr).toMatch(/403 Forbidden: The key "head-b" may not hold or release the role "cluster-a\.scheduler"/);
    expect(existsSync(markerB)).toBe(false);

    const markerA = path.join(dir, "a-ran");
    const granted = new CliProcess("head-a", ["run", "cluster-a.scheduler", "--", process.execPath, "-e", COMMAND, markerA], machine("a"));
    processes.push(granted);
    await granted.waitFor((event) => event.event === "started", { timeoutMs: 30_000 });
    await expect.poll(() => existsSync(markerA), { timeout: 10_000 }).toBe(true);
    expect(granted.stderr.split("\n")[0]).toMatch(/^ha-module run: authenticating to .* as managed identity .* for api:\/\/ha-module-test$/);
    // As the CLI words a refusal ("401 Unauthorized", "403 Forbidden"): a bare /40[13]/ also
    // matched a random port in the lines above (127.0.0.1:40301).
    expect(granted.stderr).not.toMatch(/\b(401 Unauthorized|403 Forbidden)\b/);
    // The operator's commands authenticate the same way: head A's identity may hold the role
    // but not ask its holder to hand over (that needs revoke), and is told so by name.
    // (Given by flags, not by HA_AUTH, which the SDK would read on its own.)
    const handover = await runCli(["handover", "cluster-a.scheduler", "--auth", "managed-identity", "--audience", TEST_AUDIENCE], { ...machine("a"), HA_AUTH: "", HA_AUTH_AUDIENCE: "" }, 60_000);
    expect(handover.code, handover.stderr).not.toBe(0);
    expect(handover.stderr).toMatch(new RegExp(`403 Forbidden: The identity ${HEAD_A.oid} .* may not revoke the role "cluster-a\\.scheduler"`));
    granted.child.kill("SIGTERM");
    expect(await granted.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});

describe("a worker its grants refuse, while a granted one takes and releases the role", () => {
  it("backs off up to every T however its reads are answered, and reports the 403 once: the primary changing is no answer to it", async () => {
    // Head B's calls go through a proxy that counts them; head A talks to the service directly.
    const proxy = await startRecordingProxy(service.url);
    try {
      const refused = new CliProcess("head-b", ["elect", "cluster-a.scheduler"], { ...machine("b"), HA_ENDPOINT: proxy.url });
      processes.push(refused);
      await refused.waitForStderr(/403 Forbidden[\s\S]*Trying again, less and less often/, 30_000);
      // The backoff reaches T after I, 2·I, 4·I, 8·I (3 s); count from well after that.
      await realDelay(2 * T);
      const from = proxy.requests.length;
      const eventsFrom = refused.events.length;
      const startedAt = performance.now();
      // Head A takes the role, holds it, and gives it back (stop() releases it). Head B, backed
      // off, reads at least every third poll (the others a takeover and an announcement),
      // so at most about 3·1.2·T apart: each phase lasts longer, so it reads both changes.
      const granted = new CliProcess("head-a", ["elect", "cluster-a.scheduler"], machine("a"));
      processes.push(granted);
      await granted.waitFor((event) => event.event === "elected", { timeoutMs: 30_000 });
      await realDelay(4.5 * T);
      granted.signal("SIGTERM");
      expect(await granted.exited).toEqual({ code: 0, signal: null });
      await realDelay(4.5 * T);
      const windowMs = performance.now() - startedAt;
      const made = proxy.requests.slice(from);
      // One poll is at most a read and a write (an acquire, a takeover, an announcement), and
      // the polls are at least T − I apart (a takeover comes at the holder's expiry, up to I
      // before the poll it would otherwise wait for): a busy machine only makes fewer. Before
      // the fix the answered reads reset the count: a read and a write every I or 2·I.
      const bound = 2 * (Math.ceil(windowMs / (T - I)) + 1);
      console.log(`refused worker: ${made.length} requests in ${Math.round(windowMs)} ms (at most ${bound}; I = ${I} ms, T = ${T} ms)`);
      expect(made.length, JSON.stringify(made.map((request) => `${request.method} ${request.path}`))).toBeLessThanOrEqual(bound);
      expect(made.some((request) => request.method === "PUT")).toBe(true);
      // Head B saw the role taken and given back: its reads were answered all along.
      expect(refused.events.slice(eventsFrom).filter((event) => event.event === "primaryChanged").length, refused.stderr).toBeGreaterThanOrEqual(2);
      // …and that is no answer to its refused writes: the 403 was said once, never "answers again".
      expect(refused.stderr.match(/403 Forbidden/g), refused.stderr).toHaveLength(1);
      expect(refused.stderr).not.toMatch(/answers again/);
      expect(refused.events.some((event) => event.event === "elected")).toBe(false);
      refused.signal("SIGTERM");
      expect(await refused.exited).toEqual({ code: 0, signal: null });
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it("a token asked for another audience is refused with 401, and the CLI says what is wrong with the token, not with a function key", async () => {
    const wrong = await runCli(["elect", "cluster-a.scheduler", "--exit-on-auth-error"], { ...machine("a"), HA_AUTH_AUDIENCE: "api://not-ha-module" }, 60_000);
    expect(wrong.code, wrong.stderr).toBe(1);
    // The service's reason, naming the audience the token has and the one it accepts.
    expect(wrong.stderr).toMatch(/401 Unauthorized: The token is for another audience \(aud "api:\/\/not-ha-module"\); request it for api:\/\/ha-module-test\./);
    expect(wrong.stderr).toMatch(/refused the token of managed identity .* for api:\/\/not-ha-module: ask for the token with the audience the service accepts/);
    expect(wrong.stderr).toMatch(/Give --audience \(or HA_AUTH_AUDIENCE\) as the service's HA_AUTH_AUDIENCE has it/);
    expect(wrong.stderr).not.toMatch(/function key|--key|HA_API_KEY|apiKey/);
  }, 60_000);
});
