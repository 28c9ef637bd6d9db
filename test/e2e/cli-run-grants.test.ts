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
import { CliProcess, runCli } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/** Writes its marker file (proof that it ran), then waits for SIGTERM. */
const COMMAND = "require('node:fs').writeFileSync(process.argv[1], 'ran'); process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 1000);";
const IDENTITY_HEADER = "identity-header-of-this-test";

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
  service = await startServiceProcess({ ...grantSettings(issuer.authority), HA_INTERVAL_MS: "200", HA_TIMEOUT_MS: "2000" });
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
