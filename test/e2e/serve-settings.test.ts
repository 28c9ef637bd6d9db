import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedCosmos } from "../../shared/host/embedded-cosmos.js";
import { startTestCosmos } from "../helpers/cosmos.js";
import { exposureWarning } from "../../shared/cli/commands/serve.js";
import { runServiceToExit, startServiceProcess } from "../helpers/service-process.js";

async function status(url: string): Promise<number | string> {
  try {
    return (await fetch(url, { headers: { "x-functions-key": "k" }, signal: AbortSignal.timeout(5_000) })).status;
  } catch (error) {
    return String((error as Error).cause ?? error);
  }
}

/** `ha-module serve`'s start-up settings with real processes: where it listens, and messages that name what to change. */
describe("ha-module serve: HA_HOST, PORT in use, a store it cannot reach", () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "ha-serve-settings-"));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  // 127.0.0.2 rather than 0.0.0.0 or a real interface: Linux routes all of 127/8 to lo, so
  // the setting is proven without opening the test's service to other machines.
  it.runIf(process.platform === "linux")("listens on 127.0.0.1 only by default, and on the address HA_HOST names", async () => {
    const loopback = await startServiceProcess({ HA_API_KEY: "k" });
    const elsewhere = await startServiceProcess({ HA_API_KEY: "k", HA_HOST: "127.0.0.2" });
    try {
      const port = (url: string): string => new URL(url).port;
      expect(await status(`${loopback.url}/health`)).toBe(200);
      expect(String(await status(`http://127.0.0.2:${port(loopback.url)}/api/health`))).toMatch(/ECONNREFUSED/);
      expect(elsewhere.url).toBe(`http://127.0.0.2:${port(elsewhere.url)}/api`);
      expect(await status(`${elsewhere.url}/health`)).toBe(200);
      expect(String(await status(`http://127.0.0.1:${port(elsewhere.url)}/api/health`))).toMatch(/ECONNREFUSED/);
    } finally {
      await Promise.all([loopback.stop(), elsewhere.stop()]);
    }
  });

  it("warns in the banner when HA_HOST lets other machines in and no key is required", () => {
    expect(exposureWarning({ host: "0.0.0.0", apiKey: undefined })).toMatch(/HA_HOST 0\.0\.0\.0 lets other machines in, and no key is required: .* Set HA_API_KEY\./);
    expect(exposureWarning({ host: "0.0.0.0", apiKey: "k" })).toBeUndefined();
    expect(exposureWarning({ host: "127.0.0.2", apiKey: undefined })).toBeUndefined();
  });

  it.each([
    [{ HA_HOST: "my-laptop" }, /HA_HOST must be an IP address of this machine to listen on \(got "my-laptop"\)/],
    [{ HA_HOST: "203.0.113.77" }, /HA_HOST 203\.0\.113\.77 is not an address of this machine/],
  ])("%j exits 2 naming HA_HOST", async (env, message) => {
    const { code, output } = await runServiceToExit(env);
    expect(code).toBe(2);
    expect(output).toMatch(message);
  });

  it("a PORT in use exits 2 naming PORT, instead of a stack trace", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const { code, output } = await runServiceToExit({ PORT: String(port) });
      expect(code).toBe(2);
      expect(output).toMatch(new RegExp(`PORT ${port} is in use on 127\\.0\\.0\\.1 .* set PORT to another port \\(PORT=0 picks a free one\\)`));
      expect(output).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it("a store that cannot be reached at start-up names the settings to check, HA_STORE_CREATE among them; with HA_STORE_CREATE=false it serves and warns", async () => {
    const closed: Server = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    // Azurite's public development account, at a port where nothing listens.
    const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    const store = {
      HA_TABLE_CONNECTION_STRING: `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${key};TableEndpoint=http://127.0.0.1:${port}/devstoreaccount1;`,
    };
    const { code, output } = await runServiceToExit(store);
    expect(code).toBe(1);
    expect(output).toMatch(new RegExp(`The store did not answer when asked to create table "leases" \\(HA_STORE_CREATE is on\\): .*127\\.0\\.0\\.1:${port}`));
    expect(output).toMatch(/Check HA_TABLE_CONNECTION_STRING or HA_TABLE_ENDPOINT/);
    expect(output).toMatch(/set HA_STORE_CREATE=false to skip this step/);
    expect(output).not.toMatch(/\n\s+at /);

    const lenient = await startServiceProcess({ ...store, HA_STORE_CREATE: "false" });
    try {
      expect(lenient.output()).toMatch(/warning: The store does not answer: .* Check HA_TABLE_CONNECTION_STRING or HA_TABLE_ENDPOINT\. Until it answers, every call answers 503\./);
      expect(await status(`${lenient.url}/health`)).toBe(503);
    } finally {
      await lenient.stop();
    }
  });
});

/** docs/stores.md: an external Cosmos emulator's self-signed certificate is trusted through NODE_EXTRA_CA_CERTS. */
describe("ha-module serve on an external Cosmos emulator with a self-signed certificate", () => {
  let emulator: EmbeddedCosmos;
  let scratch: string;
  let certificateFile: string;
  beforeAll(async () => {
    emulator = await startTestCosmos();
    scratch = mkdtempSync(join(tmpdir(), "ha-serve-ca-"));
    certificateFile = join(scratch, "emulator.pem");
    writeFileSync(certificateFile, emulator.certificatePem);
  });
  afterAll(async () => {
    await emulator?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const cosmosEnv = (): Record<string, string> => ({ HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: emulator.endpoint, HA_COSMOS_KEY: emulator.key });

  it("refuses it without NODE_EXTRA_CA_CERTS, saying how to trust it", async () => {
    const { code, output } = await runServiceToExit(cosmosEnv());
    expect(code).toBe(1);
    expect(output).toMatch(/certificate/i);
    expect(output).toMatch(/start with NODE_EXTRA_CA_CERTS=<that file>/);
  });

  it("serves on it with NODE_EXTRA_CA_CERTS naming the emulator's certificate", async () => {
    const service = await startServiceProcess({ ...cosmosEnv(), NODE_EXTRA_CA_CERTS: certificateFile });
    try {
      const health = await fetch(`${service.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok", store: "cosmos" });
    } finally {
      await service.stop();
    }
  });
});
