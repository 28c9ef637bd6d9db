/**
 * The registration path as Azure runs it: the packaged app (scripts/package.mjs, unpacked as
 * Azure unpacks it) is loaded under plain Node with a stand-in for the module the Node.js
 * worker injects (@azure/functions-core, test/helpers/functions-core-stand-in.mjs), so
 * @azure/functions registers every function with it as it does with the worker. What it
 * registers is checked against functions/routes.ts, and functions are invoked through the
 * library's invocation model, as the worker invokes them.
 *
 * No setting and no telemetry failure may leave the app with fewer functions than the route
 * table declares: a bad setting makes every request answer 503 Misconfigured naming the
 * setting; telemetry that cannot start leaves the service serving as usual, with health
 * naming the failure and its fix. Each is logged once.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { timers } from "../../functions/timers.js";
import { DEFAULT_SWEEP_SCHEDULE } from "../../shared/config/members-config.js";
import { allowedMethods, ROUTE_METHODS, routesOf } from "../../shared/http/route.js";
import { startTestAzurite } from "../helpers/azurite.js";
import { BICEP_COSMOS_SETTINGS, BICEP_POSTGRES_SETTINGS, BICEP_TABLE_SETTINGS } from "../helpers/bicep-settings.js";
import { GRANTS, KEYS } from "../helpers/grants-fixture.js";

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const STAND_IN = path.join(ROOT, "test", "helpers", "functions-core-stand-in.mjs");
const LOADER = path.join(ROOT, "test", "helpers", "load-azure-app.mjs");
const RESULT_MARK = "functions-core-stand-in:";

const BICEP_SETTINGS = BICEP_TABLE_SETTINGS;

interface Binding {
  type: string;
  direction: string;
  route?: string;
  methods?: string[];
  authLevel?: string;
  schedule?: string;
}
interface Loaded {
  loaded: string;
  functions: Array<{ name: string; bindings: Record<string, Binding> }>;
  hooks: string[];
  answers: Array<{ status: number; headers: Record<string, string>; body: string }>;
  stderr: string;
}
type Request = [name: string, request: { method: string; url: string; params?: Record<string, string>; headers?: Record<string, string>; body?: string }];

let workDir: string;
let entry: string;

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), "ha-module-registration-"));
  const stage = path.join(workDir, "app");
  await execFileAsync(process.execPath, [path.join(ROOT, "scripts", "package.mjs"), "--out", path.join(workDir, "app.zip"), "--stage", stage], { cwd: ROOT, timeout: 240_000 });
  entry = path.join(stage, "dist", "functions", "index.mjs");
}, 300_000);

afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

/** Loads the packaged entry in a fresh process with only `env` (as the worker would) and invokes `requests`. */
async function load(env: Record<string, string>, requests: Request[] = []): Promise<Loaded> {
  const { stdout, stderr } = await execFileAsync(process.execPath, ["--import", pathToFileURL(STAND_IN).href, LOADER, entry, JSON.stringify(requests)], {
    cwd: path.dirname(entry),
    env: { PATH: process.env["PATH"] ?? "", ...env },
    timeout: 60_000,
  });
  const line = stdout.split("\n").find((candidate) => candidate.startsWith(RESULT_MARK));
  if (line === undefined) throw new Error(`the loader printed no result:\n${stdout}\n${stderr}`);
  return { ...(JSON.parse(line.slice(RESULT_MARK.length)) as Omit<Loaded, "stderr">), stderr };
}

/** What functions/routes.ts and functions/timers.ts declare: one function per operation, one 405 function per route, each timer. */
function declared(schedule: string): Record<string, Omit<Binding, "direction">> {
  const expected: Record<string, Omit<Binding, "direction">> = {};
  for (const operation of operations) {
    expected[operation.name] = { type: "httpTrigger", route: operation.route, methods: [operation.method], authLevel: "function" };
  }
  for (const route of routesOf(operations)) {
    const others = ROUTE_METHODS.filter((method) => !allowedMethods(route).includes(method));
    if (others.length > 0) expected[route.methodNotAllowedName] = { type: "httpTrigger", route: route.route, methods: others, authLevel: "function" };
  }
  for (const timer of timers) expected[timer.name] = { type: "timerTrigger", schedule };
  return expected;
}

/** What was registered, in the same shape: each function's trigger binding. */
function registered(loaded: Loaded): Record<string, Omit<Binding, "direction">> {
  const found: Record<string, Omit<Binding, "direction">> = {};
  for (const { name, bindings } of loaded.functions) {
    const triggers = Object.values(bindings).filter((binding) => binding.direction === "in" && binding.type.endsWith("Trigger"));
    expect(triggers, name).toHaveLength(1);
    const { type, route, methods, authLevel, schedule } = triggers[0]!;
    found[name] = type === "httpTrigger" ? { type, route, methods, authLevel } : { type, schedule };
    if (type === "httpTrigger") expect(Object.values(bindings).filter((binding) => binding.direction === "out").map((binding) => binding.type), name).toEqual(["http"]);
  }
  return found;
}

/** A GET as the host hands it over: the route's parameters already taken from the path. */
const get = (name: string, route: string, params: Record<string, string> = {}): Request => [name, { method: "GET", url: `https://app.azurewebsites.net/api/${route}`, params }];

/** How many lines of `text` contain `fragment`. */
const linesWith = (text: string, fragment: string): number => text.split("\n").filter((line) => line.includes(fragment)).length;

describe("the packaged app registers with the Functions worker", () => {
  /** declared(), with every HTTP function anonymous at the platform: the app checks callers itself. */
  const anonymous = (schedule: string): Record<string, Omit<Binding, "direction">> =>
    Object.fromEntries(Object.entries(declared(schedule)).map(([name, binding]) => [name, binding.type === "httpTrigger" ? { ...binding, authLevel: "anonymous" } : binding]));
  const grantEnv = { ...BICEP_SETTINGS, HA_API_KEYS: `head-a=${KEYS["head-a"]},head-b=${KEYS["head-b"]},ops=${KEYS.ops}`, HA_GRANTS: JSON.stringify(GRANTS.filter((grant) => grant.callers.every((caller) => caller.startsWith("key:")))) };

  it("with named keys and grants registers every function anonymous and checks callers itself: 401 without a key, 403 outside the grant", async () => {
    const body = JSON.stringify({ uuid: "intruder" });
    const participant = JSON.stringify({ roles: [{ utype: "cluster-a.scheduler", uuid: "intruder" }], members: [{ group: "cluster-a", member: "node-1", session: "s" }] });
    const loaded = await load(grantEnv, [
      get("getPrimary", "primary/cluster-a.scheduler", { utype: "cluster-a.scheduler" }),
      get("health", "health"),
      [
        "updateHeartBeat",
        {
          method: "PUT",
          url: "https://app.azurewebsites.net/api/primary/cluster-a.scheduler",
          params: { utype: "cluster-a.scheduler" },
          headers: { "x-functions-key": KEYS["head-b"], "content-type": "application/json", "content-length": String(body.length) },
          body,
        },
      ],
      [
        "participantHeartbeat",
        {
          method: "POST",
          url: "https://app.azurewebsites.net/api/heartbeat",
          headers: { "x-functions-key": KEYS["head-b"], "content-type": "application/json", "content-length": String(participant.length) },
          body: participant,
        },
      ],
    ]);
    expect(loaded.loaded).toBe("ok");
    expect(registered(loaded)).toEqual(anonymous(BICEP_SETTINGS["HA_SWEEP_SCHEDULE"]!));
    expect(registered(loaded)["participantHeartbeat"]).toEqual({ type: "httpTrigger", route: "heartbeat", methods: ["POST"], authLevel: "anonymous" });
    const [read, health, write, batched] = loaded.answers;
    expect([read?.status, health?.status, write?.status, batched?.status]).toEqual([401, 401, 403, 200]);
    expect(JSON.parse(write!.body)).toMatchObject({ error: { code: "Forbidden" }, missing: { hold: "cluster-a.scheduler", caller: "key:head-b" } });
    // The participant heartbeat's parts outside head-b's grants are its routes' 403s, each for itself.
    expect(JSON.parse(batched!.body)).toEqual({
      roles: [{ utype: "cluster-a.scheduler", status: 403, body: JSON.parse(write!.body) }],
      reads: [],
      members: [{ group: "cluster-a", member: "node-1", status: 403, body: expect.objectContaining({ missing: { join: "cluster-a", caller: "key:head-b" } }) }],
      groups: [],
    });
    expect(loaded.stderr).not.toMatch(/ha-module:/);
  }, 90_000);

  it("with a bad HA_GRANTS keeps every function anonymous and answers each request 503 Misconfigured naming HA_GRANTS, logged once", async () => {
    const loaded = await load({ ...grantEnv, HA_GRANTS: '[{"callers":["key:nobody"],"hold":["*"]}]' }, [get("health", "health"), get("getPrimary", "primary/x", { utype: "x" })]);
    expect(registered(loaded)).toEqual(anonymous(BICEP_SETTINGS["HA_SWEEP_SCHEDULE"]!));
    for (const answer of loaded.answers) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "Misconfigured", message: expect.stringContaining("HA_GRANTS") } });
    }
    expect(linesWith(loaded.stderr, "503 Misconfigured")).toBe(1);
  }, 90_000);

  it("registers every function of functions/routes.ts and functions/timers.ts with the Bicep's settings, telemetry on: name, trigger, route, methods and auth level", async () => {
    const loaded = await load(BICEP_SETTINGS, [get("openApi", "openapi.json"), get("dashboardAsset", "dashboard/app.css", { asset: "app.css" }), [
      "primaryUtypeMethodNotAllowed",
      { method: "POST", url: "https://app.azurewebsites.net/api/primary/scheduler", params: { utype: "scheduler" }, headers: { "content-type": "application/json", "content-length": "2" }, body: "{}" },
    ]]);
    expect(loaded.loaded).toBe("ok");
    expect(registered(loaded)).toEqual(declared(BICEP_SETTINGS["HA_SWEEP_SCHEDULE"]!));
    expect(loaded.functions).toHaveLength(Object.keys(declared("")).length);
    // The Functions OpenTelemetry instrumentation hooked into the worker: telemetry is on.
    expect(loaded.hooks).toEqual(expect.arrayContaining(["log", "preInvocation"]));
    const [openApi, css, wrongMethod] = loaded.answers;
    expect(openApi?.status).toBe(200);
    expect(JSON.parse(openApi!.body)).toMatchObject({ openapi: expect.any(String) });
    // The dashboard's files are read beside the bundle.
    expect(css?.status).toBe(200);
    expect(css?.body).toBe(readFileSync(path.join(ROOT, "functions", "dashboard", "app.css"), "utf8"));
    expect(wrongMethod?.status).toBe(405);
    expect(wrongMethod?.headers).toMatchObject({ allow: "GET, PUT, DELETE" });
    expect(loaded.stderr).not.toMatch(/ha-module:/);
  }, 90_000);

  it("registers the same functions with the Bicep's Cosmos DB settings", async () => {
    const loaded = await load(BICEP_COSMOS_SETTINGS, [get("openApi", "openapi.json")]);
    expect(registered(loaded)).toEqual(declared(BICEP_COSMOS_SETTINGS["HA_SWEEP_SCHEDULE"]!));
    expect(loaded.answers[0]?.status).toBe(200);
    expect(loaded.stderr).not.toMatch(/ha-module:/);
  }, 90_000);

  it("registers the same functions with the Bicep's PostgreSQL settings; with no server to reach, a call answers 503 StoreUnavailable (creating the tables is tried again by the next request)", async () => {
    const loaded = await load(BICEP_POSTGRES_SETTINGS, [get("openApi", "openapi.json")]);
    expect(registered(loaded)).toEqual(declared(BICEP_POSTGRES_SETTINGS["HA_SWEEP_SCHEDULE"]!));
    expect(loaded.answers[0]?.status).toBe(503);
    expect(JSON.parse(loaded.answers[0]!.body as string)).toMatchObject({ error: { code: "StoreUnavailable" } });
    expect(loaded.stderr).not.toMatch(/ha-module:/);
  }, 90_000);

  it("serves as usual when telemetry cannot start (a host without log hooks): health answers 200 naming the failure and its fix, a heartbeat is accepted, logged once", async () => {
    // A store that answers, so that health's 200 is the store's and not a guess.
    const azurite = await startTestAzurite();
    try {
      // The store by connection string instead of the Bicep's managed identity endpoint.
      const settings = Object.fromEntries(Object.entries(BICEP_SETTINGS).filter(([name]) => name !== "HA_TABLE_ENDPOINT"));
      const env = { ...settings, HA_TABLE_CONNECTION_STRING: azurite.connectionString, HA_STORE_CREATE: "true", FUNCTIONS_CORE_STAND_IN_HOST: "old" };
      const body = JSON.stringify({ uuid: "worker-1", address: "10.0.0.1:5800" });
      const loaded = await load(env, [
        get("health", "health"),
        [
          "updateHeartBeat",
          {
            method: "PUT",
            url: "https://app.azurewebsites.net/api/primary/scheduler",
            params: { utype: "scheduler" },
            headers: { "content-type": "application/json", "content-length": String(body.length) },
            body,
          },
        ],
        get("getPrimary", "primary/scheduler", { utype: "scheduler" }),
      ]);
      expect(loaded.loaded).toBe("ok");
      expect(registered(loaded)).toEqual(declared(BICEP_SETTINGS["HA_SWEEP_SCHEDULE"]!));
      // The instrumentation's hooks never got in: this is the host without log hooks.
      expect(loaded.hooks).not.toContain("log");
      const [health, heartbeat, primary] = loaded.answers;
      expect(health?.status).toBe(200);
      expect(JSON.parse(health!.body)).toEqual({
        status: "ok",
        store: "table",
        telemetry: {
          status: "failed",
          setting: "APPLICATIONINSIGHTS_CONNECTION_STRING",
          error: expect.stringMatching(/^Telemetry could not start: Log hooks require Azure Functions Host v4\.34 or higher\.$/),
          fix: expect.stringMatching(/Functions host 4\.34 or later .*or unset APPLICATIONINSIGHTS_CONNECTION_STRING to run without telemetry\.$/),
        },
      });
      expect(heartbeat?.status).toBe(200);
      expect(JSON.parse(heartbeat!.body)).toMatchObject({ utype: "scheduler", primary: { uuid: "worker-1", epoch: expect.any(Number) } });
      expect(primary?.status).toBe(200);
      expect(JSON.parse(primary!.body)).toMatchObject({ primary: { uuid: "worker-1" } });
      expect(loaded.stderr).not.toContain("503 Misconfigured");
      expect(linesWith(loaded.stderr, "ha-module:")).toBe(1);
      expect(linesWith(loaded.stderr, "runs without telemetry")).toBe(1);
    } finally {
      await azurite.close();
    }
  }, 90_000);

  it("still answers 503 Misconfigured for a bad setting of its own when telemetry cannot start too: both logged once", async () => {
    const loaded = await load({ ...BICEP_SETTINGS, HA_TIMEOUT_MS: "1500", FUNCTIONS_CORE_STAND_IN_HOST: "old" }, [get("health", "health"), get("getPrimary", "primary/scheduler", { utype: "scheduler" })]);
    expect(registered(loaded)).toEqual(declared(BICEP_SETTINGS["HA_SWEEP_SCHEDULE"]!));
    for (const answer of loaded.answers) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "Misconfigured", message: expect.stringContaining("HA_TIMEOUT_MS") } });
    }
    expect(linesWith(loaded.stderr, "503 Misconfigured")).toBe(1);
    expect(linesWith(loaded.stderr, "runs without telemetry")).toBe(1);
  }, 90_000);

  // Each way a setting can be missing or wrong, and the setting the answer must name.
  const badSettings: Array<{ what: string; env: Record<string, string>; setting: string }> = [
    { what: "no store setting at all (only the host's AzureWebJobsStorage)", env: { AzureWebJobsStorage: "UseDevelopmentStorage=true" }, setting: "HA_TABLE_CONNECTION_STRING" },
    { what: "an unknown HA_STORE", env: { HA_STORE: "redis" }, setting: "HA_STORE" },
    { what: "HA_STORE=cosmos without HA_COSMOS_ENDPOINT", env: { HA_STORE: "cosmos" }, setting: "HA_COSMOS_ENDPOINT" },
    { what: "an HA_TABLE_ENDPOINT that is no URL", env: { HA_TABLE_ENDPOINT: "acct.table" }, setting: "HA_TABLE_ENDPOINT" },
    { what: "an HA_TABLE_CONNECTION_STRING that is no connection string", env: { HA_TABLE_CONNECTION_STRING: "hello" }, setting: "HA_TABLE_CONNECTION_STRING" },
    { what: "a connection string the Table client refuses", env: { HA_TABLE_CONNECTION_STRING: "AccountName=acct;AccountKey=" }, setting: "HA_TABLE_CONNECTION_STRING" },
    { what: "HA_TIMEOUT_MS not above 2 × HA_INTERVAL_MS", env: { HA_TABLE_ENDPOINT: BICEP_SETTINGS["HA_TABLE_ENDPOINT"]!, HA_TIMEOUT_MS: "1500" }, setting: "HA_TIMEOUT_MS" },
    { what: "a short HA_LEASE_SECRET", env: { HA_TABLE_ENDPOINT: BICEP_SETTINGS["HA_TABLE_ENDPOINT"]!, HA_LEASE_SECRET: "short" }, setting: "HA_LEASE_SECRET" },
    { what: "an uneven HA_SWEEP_SCHEDULE", env: { HA_TABLE_ENDPOINT: BICEP_SETTINGS["HA_TABLE_ENDPOINT"]!, HA_SWEEP_SCHEDULE: "*/7 * * * * *" }, setting: "HA_SWEEP_SCHEDULE" },
    { what: "a bad HA_STORE_CREATE", env: { HA_TABLE_ENDPOINT: BICEP_SETTINGS["HA_TABLE_ENDPOINT"]!, HA_STORE_CREATE: "maybe" }, setting: "HA_STORE_CREATE" },
  ];

  for (const { what, env, setting } of badSettings) {
    it(`keeps every function with ${what}: each request, health included, answers 503 Misconfigured naming ${setting}, logged once`, async () => {
      const loaded = await load(env, [
        get("health", "health"),
        get("getPrimary", "primary/scheduler", { utype: "scheduler" }),
        ["updateMemberHeartBeat", { method: "PUT", url: "https://app.azurewebsites.net/api/members/g/m", params: { group: "g", member: "m" }, headers: { "content-type": "application/json", "content-length": "2" }, body: "{}" }],
      ]);
      expect(loaded.loaded).toBe("ok");
      // A bad schedule cannot be the timer's: it runs on the default one, and does nothing while misconfigured.
      expect(registered(loaded)).toEqual(declared(env["HA_SWEEP_SCHEDULE"] === undefined || setting === "HA_SWEEP_SCHEDULE" ? DEFAULT_SWEEP_SCHEDULE : env["HA_SWEEP_SCHEDULE"]));
      for (const answer of loaded.answers) {
        expect(answer.status).toBe(503);
        const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
        expect(body.error.code).toBe("Misconfigured");
        expect(body.error.message).toContain(setting);
      }
      expect(linesWith(loaded.stderr, "503 Misconfigured")).toBe(1);
      expect(loaded.stderr).toContain(setting);
    }, 90_000);
  }
});
