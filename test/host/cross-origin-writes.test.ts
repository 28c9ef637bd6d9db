/**
 * Writes a browser sends from a page of another origin, through both hosts over one runtime:
 * the Azure Functions registration (registerFunctions, as functions/index.ts registers the
 * route table, given the Functions HttpRequest) and the local host (`ha-module serve`'s, over
 * real HTTP). Each write route (PUT, DELETE, POST) refuses them with the same 403 CrossOrigin
 * on both, before a single store call, so nothing changes; the same writes from the
 * service's own origin, and from programs that send no Origin, go ahead
 * (docs/api.md#writes-from-another-origin).
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { HttpRequest, InvocationContext, type HttpFunctionOptions } from "../../shared/http/azure-functions.js";
import { registerFunctions } from "../../shared/http/register-functions.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { startLocalHost, type LocalHost } from "../../shared/host/local-host.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { CountingMemberStore } from "../helpers/counting-member-store.js";
import { CountingStore } from "../helpers/counting-store.js";

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

interface Write {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
}

/** Every write route of the table, as a browser page would send it. */
const WRITES: readonly Write[] = [
  { name: "handoverPrimary", method: "POST", path: "primary/scheduler/handover", body: {} },
  { name: "updateHeartBeat", method: "PUT", path: "primary/scheduler", body: { uuid: "intruder", address: "evil:1" } },
  { name: "releasePrimary", method: "DELETE", path: "primary/scheduler?uuid=holder" },
  { name: "updateMemberHeartBeat", method: "PUT", path: "members/workers/intruder", body: { session: "s-1" } },
  { name: "leaveGroup", method: "DELETE", path: "members/workers/node-1?session=s-node-1" },
  { name: "participantHeartbeat", method: "POST", path: "heartbeat", body: { roles: [{ utype: "scheduler", uuid: "intruder" }] } },
];

let leases: CountingStore;
let members: CountingMemberStore;
let runtime: Runtime;
let local: LocalHost;
let port: number;
const functions = new Map<string, HttpFunctionOptions>();

beforeAll(async () => {
  leases = new CountingStore(new MemoryLeaseStore());
  members = new CountingMemberStore(new MemoryMemberStore());
  runtime = createRuntime({ timing: { intervalMs: 1000, timeoutMs: 5000 }, storeTimeoutMs: 2000, leaseSecret: "a-test-secret-that-is-long-enough-for-hmac" }, { leases, members });
  registerFunctions({ http: (name, options) => functions.set(name, options) }, operations, async () => runtime);
  local = await startLocalHost({ operations, runtime: async () => runtime, port: 0, log: () => undefined });
  port = Number(new URL(local.url).port);
});
afterAll(async () => {
  await local?.close();
});

/** Through the Azure registration: the function registered for `write.name`, given the Functions HttpRequest. */
async function viaAzure(write: Write, headers: Record<string, string>): Promise<Answer> {
  const options = functions.get(write.name);
  if (options === undefined) throw new Error(`no function ${write.name}`);
  const url = new URL(`https://app.azurewebsites.net/api/${write.path}`);
  const segments = url.pathname.split("/").slice(2);
  const params: Record<string, string> = segments[0] === "primary" ? { utype: segments[1] ?? "" } : segments[0] === "members" ? { group: segments[1] ?? "", member: segments[2] ?? "" } : {};
  const text = write.body === undefined ? undefined : JSON.stringify(write.body);
  const request = new HttpRequest({
    method: write.method,
    url: url.toString(),
    params,
    headers: { host: "app.azurewebsites.net", ...(text === undefined ? {} : { "content-type": "application/json", "content-length": String(text.length) }), ...headers },
    ...(text === undefined ? {} : { body: { string: text } }),
  });
  const response = (await options.handler(request, new InvocationContext())) as { status?: number; jsonBody?: unknown };
  return { status: response.status ?? 200, body: (response.jsonBody ?? {}) as Record<string, unknown> };
}

/** Through the local host over HTTP, with exactly these headers (Host included). */
function viaLocal(write: Write, headers: Record<string, string>): Promise<Answer> {
  const text = write.body === undefined ? "" : JSON.stringify(write.body);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      { host: "127.0.0.1", port, method: write.method, path: `/api/${write.path}`, headers: { ...(text === "" ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) }), ...headers } },
      (response) => {
        let data = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (data += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: data === "" ? {} : (JSON.parse(data) as Record<string, unknown>) }));
      },
    );
    sent.on("error", reject);
    sent.end(text);
  });
}

const localHost = (): string => `127.0.0.1:${port}`;

describe("writes from a page of another origin, on both hosts", () => {
  beforeEach(async () => {
    // A held role with a standby, and a member: what each refused write would have changed.
    expect((await viaLocal({ name: "updateHeartBeat", method: "PUT", path: "primary/scheduler", body: { uuid: "holder", address: "holder:1" } }, { host: localHost() })).status).toBe(200);
    expect((await viaLocal({ name: "updateMemberHeartBeat", method: "PUT", path: "members/workers/node-1", body: { session: "s-node-1" } }, { host: localHost() })).status).toBe(200);
    leases.reset();
    members.reset();
  });

  for (const write of WRITES) {
    it(`${write.method} ${write.name} from another site is 403 CrossOrigin on both hosts, the same answer, and no store call`, async () => {
      const evil = { origin: "https://evil.example", "sec-fetch-site": "cross-site" };
      const azure = await viaAzure(write, evil);
      const answered = await viaLocal(write, { host: localHost(), ...evil });
      expect(azure.status).toBe(403);
      expect(azure.body).toEqual({ error: { code: "CrossOrigin", message: expect.stringContaining(`${write.method} from "https://evil.example" refused (Sec-Fetch-Site: cross-site)`) } });
      expect(answered).toEqual(azure);
      // From another port of 127.0.0.1, by a browser without Sec-Fetch-Site: the Origin decides.
      const sibling = { origin: "http://127.0.0.1:8080" };
      const azureSibling = await viaAzure(write, sibling);
      expect(azureSibling.status).toBe(403);
      expect(await viaLocal(write, { host: localHost(), ...sibling })).toEqual(azureSibling);
      expect(leases.calls).toEqual([]);
      expect(members.calls).toEqual([]);
    });
  }

  it("leaves the role and the member as they were", async () => {
    for (const write of WRITES) await viaLocal(write, { host: localHost(), origin: "https://evil.example", "sec-fetch-site": "cross-site" });
    const role = await viaLocal({ name: "getPrimary", method: "GET", path: "primary/scheduler" }, { host: localHost(), origin: "https://evil.example", "sec-fetch-site": "cross-site" });
    expect(role).toMatchObject({ status: 200, body: { primary: { uuid: "holder", revoked: false }, handover: null } });
    const group = await viaLocal({ name: "listMembers", method: "GET", path: "members/workers" }, { host: localHost() });
    expect((group.body["members"] as Array<{ member: string; state: string }>).map(({ member, state }) => [member, state])).toEqual([["node-1", expect.stringMatching(/joining|active/)]]);
  });

  it("serves the same writes from the service's own origin and from programs (no Origin): the handover goes ahead on both hosts", async () => {
    const own = await viaLocal(WRITES[0]!, { host: localHost(), origin: `http://${localHost()}`, "sec-fetch-site": "same-origin" });
    expect(own.status).toBe(202);
    expect(own.body).toMatchObject({ handover: { phase: "pending", to: null } });
    // Behind Azure's front end: Front Door's X-Forwarded-Host is the host the browser used.
    const behindFrontDoor = await viaAzure(WRITES[0]!, { "x-forwarded-host": "ha.example.com", origin: "https://ha.example.com" });
    expect(behindFrontDoor.status).toBe(202);
    const program = await viaAzure(WRITES[1]!, {});
    expect(program).toMatchObject({ status: 409, body: { error: { code: "LeaseHeld" } } });
    expect(leases.calls.length).toBeGreaterThan(0);
  });
});
