import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/** `ha-module primary` and the shared flags, against the built service with an API key. */
describe("ha-module primary", () => {
  const KEY = "e2e-function-key";
  let service: ServiceProcess;
  let holder: CliProcess;

  beforeAll(async () => {
    service = await startServiceProcess({ HA_API_KEY: KEY, HA_INTERVAL_MS: "200", HA_TIMEOUT_MS: "2000" });
    holder = new CliProcess("holder", ["elect", "e2e-primary", "--address", "10.1.2.3:80"], { HA_ENDPOINT: service.url, HA_API_KEY: KEY });
    await holder.waitFor((e) => e.event === "elected");
  });

  afterAll(async () => {
    await holder?.kill();
    await service?.stop();
  });

  async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const cli = new CliProcess("primary", args, env);
    let stdout = "";
    cli.child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const { code } = await cli.exited;
    return { code, stdout, stderr: cli.stderr };
  }

  it("prints GetPrimary of one utype as JSON, with the key from --key", async () => {
    const { code, stdout } = await run(["primary", "e2e-primary", "--endpoint", service.url, "--key", KEY]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ utype: "e2e-primary", primary: { address: "10.1.2.3:80", epoch: 1 }, intervalMs: 200, timeoutMs: 2000 });
  });

  it("prints every live primary without a utype, with endpoint and key from HA_ENDPOINT / HA_API_KEY", async () => {
    const { code, stdout } = await run(["primary"], { HA_ENDPOINT: service.url, HA_API_KEY: KEY });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ primaries: [expect.objectContaining({ utype: "e2e-primary" })] });
  });

  it("a refused call exits 1 with the service's message", async () => {
    const { code, stderr } = await run(["primary", "x", "--endpoint", service.url], { HA_API_KEY: "" });
    expect(code).toBe(1);
    expect(stderr).toMatch(/401 Unauthorized: Send the API key in the x-functions-key header/);
  });

  it.each([
    [["primary", "--nope"], /Unknown option '--nope'/],
    [["primary", "a", "b"], /primary takes at most one utype/],
    [["primary", "bad utype"], /Expected `utype` to be 1–128 characters/],
    [["primary", "--endpoint", "localhost:7071"], /Expected `endpoint` to be an http\(s\) URL/],
    [["elect"], /elect takes exactly one utype \(got none\)/],
    [["elect", "x", "--check-port", "1"], /Unknown option '--check-port'/],
    [["frobnicate"], /Unknown command "frobnicate"/],
  ])("%j prints the usage and exits 2", async (args, message) => {
    const { code, stderr } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).toMatch(/Usage: ha-module <command>/);
  });
});
