import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, primaryOf } from "../helpers/e2e-http.js";
import { runServiceToExit, startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * `HA_STORE=postgres npm start` without HA_POSTGRES_URL (docs/cli.md#serve): the service
 * runs a PostgreSQL of its own, its data in HA_DATA_DIR, and never leaves it behind: a
 * SIGKILLed service's server stops too (its keeper sees the lifeline end), and the next
 * start finds every answered write.
 */
const T = 3000;

/** Live processes whose command line names `dir` (the embedded server's data directory). */
function processesUsing(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(dir)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (check()) return true;
    await sleep(50);
  }
  return check();
}

describe("HA_STORE=postgres npm start: an embedded PostgreSQL, data in HA_DATA_DIR", () => {
  let dir: string;
  let service: ServiceProcess | undefined;
  const env = (): Record<string, string> => ({ HA_STORE: "postgres", HA_IN_MEMORY: "false", HA_DATA_DIR: join(dir, "data"), HA_INTERVAL_MS: "500", HA_TIMEOUT_MS: String(T) });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "ha-serve-pg-"));
    chmodSync(dir, 0o755); // under root the server runs as nobody, who must enter it
  });

  afterAll(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The first term's epoch, as the first test got it: the next start must find it. */
  let firstEpoch = 0;

  it("serves on it, says so, and keeps the password out of the banner", { timeout: 120_000 }, async () => {
    service = await startServiceProcess(env());
    expect(service.output()).toContain(`store: postgres schema "ha" on an embedded PostgreSQL (data in ${join(dir, "data")})`);
    const acquired = await call(service.url, "PUT", "/primary/embedded", { uuid: "first", address: "a:1" });
    expect(acquired.status).toBe(200);
    expect(primaryOf(acquired)).toMatchObject({ uuid: "first" });
    firstEpoch = primaryOf(acquired)!["epoch"] as number;
    expect(firstEpoch).toBeGreaterThan(0);
    const password = readFileSync(join(dir, "data", "postgres", "password"), "utf8").trim();
    expect(password).toMatch(/^[0-9a-f]{48}$/);
    expect(statSync(join(dir, "data", "postgres", "password")).mode & 0o077).toBe(0);
    expect(service.output()).not.toContain(password);
    expect(await call(service.url, "GET", "/health")).toMatchObject({ status: 200, body: { status: "ok", store: "postgres" } });
  });

  it("takes its server down with it when SIGKILLed, and the next start finds every answered write", { timeout: 120_000 }, async () => {
    const dataDir = join(dir, "data", "postgres", "data");
    expect(processesUsing(dataDir).length).toBeGreaterThan(0);
    service!.child.kill("SIGKILL");
    await service!.stop();
    // The keeper saw its lifeline end and asked the server for a fast shutdown.
    expect(await waitUntil(() => processesUsing(dataDir).length === 0, 30_000)).toBe(true);

    service = await startServiceProcess(env());
    const view = await call(service.url, "GET", "/primary/embedded");
    expect(view.body["epoch"]).toBe(firstEpoch);
    // The holder's term is still judged from its stored renewal: another may take over only after T.
    await sleep(T + 200);
    const taken = await call(service.url, "PUT", "/primary/embedded", { uuid: "second" });
    expect(primaryOf(taken)).toMatchObject({ uuid: "second" });
    expect(primaryOf(taken)!["epoch"]).toBeGreaterThan(firstEpoch);
  });
});

describe("HA_STORE=postgres with a server that does not answer", () => {
  // Port 1 on this machine: nothing listens there, the connection is refused at once.
  const url = "postgres://ha:secret@127.0.0.1:1/ha";

  it("exits 1 when it cannot create its tables, naming HA_POSTGRES_URL and HA_STORE_CREATE, without the password", { timeout: 60_000 }, async () => {
    const { code, output } = await runServiceToExit({ HA_STORE: "postgres", HA_POSTGRES_URL: url });
    expect(code).toBe(1);
    expect(output).toMatch(/did not answer when asked to create the tables of schema "ha".*ECONNREFUSED.*Check HA_POSTGRES_URL.*HA_STORE_CREATE=false/s);
    expect(output).not.toContain("secret");
    expect(output).not.toMatch(/^\s+at /m);
  });

  it("with HA_STORE_CREATE=false starts anyway, warns, and answers 503 StoreUnavailable until the server does", { timeout: 60_000 }, async () => {
    const service = await startServiceProcess({ HA_STORE: "postgres", HA_POSTGRES_URL: url, HA_STORE_CREATE: "false" });
    try {
      expect(service.output()).toMatch(/store: postgres schema "ha" at 127\.0\.0\.1:1\/ha \(HA_POSTGRES_URL\)/);
      expect(service.output()).toMatch(/warning: The store does not answer: .*ECONNREFUSED.*Check HA_POSTGRES_URL/);
      const reply = await call(service.url, "GET", "/primary/any");
      expect(reply.status).toBe(503);
      expect(reply.body).toMatchObject({ error: { code: "StoreUnavailable" } });
      expect(service.output()).not.toContain("secret");
    } finally {
      await service.stop();
    }
  });
});
