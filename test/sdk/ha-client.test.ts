import { COUNTER_ONLY } from "../helpers/fake-clock.js";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { operations } from "../../functions/routes.js";
import { startLocalHost, type LocalHost } from "../../shared/host/local-host.js";
import { createRuntime } from "../../shared/http/runtime.js";
import { CorruptedMessageError } from "../../shared/sdk/transport/corrupted-message-error.js";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import { EndpointNotFoundError } from "../../shared/sdk/transport/endpoint-not-found-error.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { UnauthorizedError } from "../../shared/sdk/auth/unauthorized-error.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";

const timing = { intervalMs: 200, timeoutMs: 1500 };

/** The real route table and lease service on a real local HTTP port, over the memory store. */
async function startService(apiKey?: string): Promise<LocalHost> {
  const runtime = createRuntime({ timing, storeTimeoutMs: 2000, leaseSecret: undefined }, { epochClock: COUNTER_ONLY, leases: new MemoryLeaseStore() });
  return startLocalHost({ operations, runtime: async () => runtime, port: 0, apiKey, log: () => undefined });
}

describe("HaClient against the real service", () => {
  let host: LocalHost;
  let client: HaClient;
  beforeAll(async () => {
    host = await startService();
    client = new HaClient({ endpoint: host.url });
  });
  afterAll(() => host.close());

  it("acquires, renews on the fast path, refuses a second holder with a typed outcome, and releases", async () => {
    expect(await client.getPrimary("svc-a")).toEqual({ utype: "svc-a", primary: null, epoch: 0, ...timing, handover: null });
    const first = await client.heartbeat("svc-a", { uuid: "u1", address: "10.0.0.1:80" });
    expect(first.outcome).toBe("accepted");
    if (first.outcome !== "accepted") return;
    expect(first.view.primary).toMatchObject({ uuid: "u1", address: "10.0.0.1:80", epoch: 1 });
    const renewed = await client.heartbeat("svc-a", { uuid: "u1", address: "10.0.0.1:80", lease: first.lease });
    expect(renewed).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "u1", epoch: 1 } } });

    const held = await client.heartbeat("svc-a", { uuid: "u2" });
    expect(held.outcome).toBe("held");
    expect(held.view.primary?.uuid).toBe("u1");
    expect(await client.release("svc-a", "u2")).toMatchObject({ outcome: "held", view: { primary: { uuid: "u1" } } });

    expect((await client.listPrimaries()).map((view) => view.utype)).toContain("svc-a");
    if (renewed.outcome !== "accepted") return;
    expect(await client.release("svc-a", "u1", { lease: renewed.lease })).toEqual({ outcome: "released", view: { utype: "svc-a", primary: null, epoch: 1, ...timing, handover: null } });
    // u2's DELETE retired it: that uuid can never hold the lease; a new one can.
    expect(await client.heartbeat("svc-a", { uuid: "u2" })).toMatchObject({ outcome: "revoked" });
    const next = await client.heartbeat("svc-a", { uuid: "u3" });
    expect(next).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "u3", epoch: 2, revoked: false } } });
  });

  it("sends a priority and a preemption (docs/protocol.md#priorities-and-preemption), single and batched, and refuses a bad priority before sending", async () => {
    const held = await client.heartbeat("svc-p", { uuid: "p-low", priority: -1 });
    expect(held).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "p-low", priority: -1 } } });
    const asked = await client.heartbeat("svc-p", { uuid: "p-high", priority: 2, announce: true, preempt: true });
    expect(asked).toMatchObject({ outcome: "held", view: { handover: { to: "p-high", reason: "preempt", phase: "pending" } } });
    const batched = await client.participantHeartbeat({ roles: [{ utype: "svc-p", uuid: "p-mid", priority: 1, announce: true }] });
    expect(batched.roles?.[0]).toMatchObject({ ok: true, value: { outcome: "held" } });
    const view = await client.getPrimary("svc-p", { standbys: true });
    expect(view.standbys?.map((standby) => [standby.uuid, standby.priority])).toEqual([
      ["p-high", 2],
      ["p-mid", 1],
    ]);
    await expect(client.heartbeat("svc-p", { uuid: "p-bad", priority: 1.5 })).rejects.toThrow(/Expected `priority` to be an integer from -1000000 to 1000000/);
  });

  it("a release without the token revokes: the holder's next heartbeat is the `revoked` outcome", async () => {
    const first = await client.heartbeat("svc-r", { uuid: "r1", address: "h:1" });
    if (first.outcome !== "accepted") throw new Error(first.outcome);
    const revoked = await client.release("svc-r", "r1");
    expect(revoked).toMatchObject({ outcome: "revoked", view: { primary: { uuid: "r1", revoked: true } } });
    expect(await client.heartbeat("svc-r", { uuid: "r1", lease: first.lease })).toMatchObject({ outcome: "revoked", view: { primary: { uuid: "r1", revoked: true } } });
    // Revoked or not, a token still proves the holder's consent: released at once.
    expect(await client.release("svc-r", "r1", { lease: first.lease })).toMatchObject({ outcome: "released", view: { primary: null } });
  });

  it("sends an omitted address as omitted (kept) and null as null (cleared)", async () => {
    const first = await client.heartbeat("svc-addr", { uuid: "a1", address: "h:1" });
    if (first.outcome !== "accepted") throw new Error(first.outcome);
    const kept = await client.heartbeat("svc-addr", { uuid: "a1", lease: first.lease });
    expect(kept).toMatchObject({ view: { primary: { address: "h:1" } } });
    if (kept.outcome !== "accepted") return;
    expect(await client.heartbeat("svc-addr", { uuid: "a1", address: null, lease: kept.lease })).toMatchObject({ view: { primary: { address: null } } });
  });

  it("reports health", async () => {
    expect(await client.health()).toEqual({ status: "ok", store: "memory" });
  });

  it("a forged token is treated as absent; a refusal is an HaRequestError with the service's code", async () => {
    const forged = await client.heartbeat("svc-b", { uuid: "u1", lease: "v1.forged.token", address: "a" });
    expect(forged).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "u1", epoch: 1 } } });
    const refused = await fetchError(() => new HaClient({ endpoint: `${host.url}/nope` }).listPrimaries());
    expect(refused).toBeInstanceOf(HaRequestError);
    expect(refused).toMatchObject({ status: 404, code: "NotFound" });
  });

  it("an endpoint without /api is an EndpointNotFoundError that says so, and no retry can fix it", async () => {
    const withoutApi = host.url.replace(/\/api$/, "");
    expect(withoutApi).not.toBe(host.url);
    const error = await fetchError(() => new HaClient({ endpoint: withoutApi }).getPrimary("svc-a"));
    expect(error).toBeInstanceOf(EndpointNotFoundError);
    expect(error).toMatchObject({ name: "EndpointNotFoundError", status: 404, code: "NotFound", retryable: false });
    expect((error as Error).message).toMatch(new RegExp(`^GetPrimary\\(svc-a\\): 404 Not Found from ${withoutApi}/primary/svc-a \\(No route /primary/svc-a; .*\\)\\. Does your endpoint end in /api\\?`));
  });

  it("validates arguments before anything is sent", async () => {
    await expect(client.getPrimary("bad utype")).rejects.toThrow("Expected `utype` to be 1–128 characters");
    await expect(client.heartbeat("a", { uuid: "" })).rejects.toThrow("Expected `uuid` to be 1–128 characters");
    await expect(client.getPrimary("a", { timeoutInMs: -1 })).rejects.toThrow("Expected `timeoutInMs` to be a positive number of milliseconds, got -1.");
    await expect(client.getPrimary("..")).rejects.toThrow('Expected `utype` to be a name a URL path can address, not "..".');
    await expect(client.release("a", ".")).rejects.toThrow("Expected `uuid` to be a name a URL path can address");
    await expect(client.heartbeat("a", { uuid: "u", address: "\u{1F600}".repeat(513) })).rejects.toThrow("Expected `address` to be where");
    // 300 emoji are 600 UTF-16 units but 300 characters: within the limit, for the SDK and the service.
    expect(await client.heartbeat("svc-emoji", { uuid: "e1", address: "\u{1F600}".repeat(300) })).toMatchObject({ outcome: "accepted" });
    await expect(client.release("a", "u", { lease: "" })).rejects.toThrow("Expected `lease` to be a non-empty string");
  });
});

describe("HaClient options", () => {
  afterEach(() => void vi.unstubAllEnvs());
  it("HA_ENDPOINT is the default endpoint; without either, the message says to set one", () => {
    vi.stubEnv("HA_ENDPOINT", "");
    expect(() => new HaClient()).toThrow("Expected `endpoint` (the service's base URL, e.g. http://127.0.0.1:7071/api) to be given, or HA_ENDPOINT to be set.");
    expect(() => new HaClient(null as never)).toThrow('Expected the HaClient options to be an object such as { endpoint: "http://127.0.0.1:7071/api" }.');
    vi.stubEnv("HA_ENDPOINT", "127.0.0.1:7071/api");
    expect(() => new HaClient()).toThrow('Expected `HA_ENDPOINT` to be an http(s) URL such as http://127.0.0.1:7071/api, got "127.0.0.1:7071/api".');
    expect(new HaClient({ endpoint: "http://10.0.0.1/api/" }).endpoint).toBe("http://10.0.0.1/api");
    vi.stubEnv("HA_ENDPOINT", "https://app.azurewebsites.net/api");
    expect(new HaClient().endpoint).toBe("https://app.azurewebsites.net/api");
  });

  it.each([
    [{ endpoint: "localhost:7071" }, "Expected `endpoint` to be an http(s) URL such as http://127.0.0.1:7071/api, got \"localhost:7071\"."],
    [{ endpoint: "http://x", apiKey: "" }, "Expected `apiKey` to be a non-empty string, got \"\"."],
    [{ endpoint: "http://x", timeoutInMs: Number.NaN }, "Expected `timeoutInMs` to be a positive number of milliseconds, got NaN."],
  ])("%o", (options, message) => {
    expect(() => new HaClient(options)).toThrow(message);
  });
});

describe("HaClient with an API key", () => {
  let host: LocalHost;
  beforeAll(async () => {
    host = await startService("s3cret-key");
  });
  afterAll(() => host.close());

  afterEach(() => void vi.unstubAllEnvs());

  it("takes endpoint and key from HA_ENDPOINT and HA_API_KEY when they are not given; a given one always wins", async () => {
    vi.stubEnv("HA_ENDPOINT", host.url);
    vi.stubEnv("HA_API_KEY", "s3cret-key");
    expect((await new HaClient().getPrimary("env")).primary).toBeNull();
    await expect(new HaClient({ apiKey: "wrong" }).getPrimary("env")).rejects.toBeInstanceOf(UnauthorizedError);
    vi.stubEnv("HA_ENDPOINT", "http://127.0.0.1:9/api");
    vi.stubEnv("HA_API_KEY", "wrong");
    expect((await new HaClient({ endpoint: host.url, apiKey: "s3cret-key" }).getPrimary("env")).primary).toBeNull();
    vi.stubEnv("HA_API_KEY", "  ");
    await expect(new HaClient({ endpoint: host.url }).getPrimary("env")).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it("a PrimaryElector built from the environment alone is elected", async () => {
    vi.stubEnv("HA_ENDPOINT", host.url);
    vi.stubEnv("HA_API_KEY", "s3cret-key");
    const elector = new PrimaryElector({ utype: "from-env" });
    const elected = new Promise((resolve) => elector.on("elected", resolve));
    elector.start();
    try {
      expect(await elected).toMatchObject({ uuid: elector.uuid, epoch: 1 });
    } finally {
      await elector.stop();
    }
  });

  it("sends the key in x-functions-key; a missing or wrong key is an UnauthorizedError that no retry can fix", async () => {
    vi.stubEnv("HA_API_KEY", "");
    expect((await new HaClient({ endpoint: host.url, apiKey: "s3cret-key" }).getPrimary("k")).primary).toBeNull();
    for (const client of [new HaClient({ endpoint: host.url }), new HaClient({ endpoint: host.url, apiKey: "rotated" })]) {
      const error = await fetchError(() => client.getPrimary("k"));
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toBeInstanceOf(HaRequestError);
      expect(error).toMatchObject({ name: "UnauthorizedError", status: 401, code: "Unauthorized", retryable: false });
      // The service's own words first, then what to change.
      expect((error as Error).message).toBe(
        `GetPrimary(k): 401 Unauthorized: Send the API key in the x-functions-key header. Wrong or missing function key for ${host.url}: pass apiKey or set HA_API_KEY.`,
      );
    }
  });
});

/** A server that answers whatever the test says, to see corrupted and slow answers arrive. */
describe("HaClient refuses answers it cannot trust", () => {
  let server: Server;
  let endpoint: string;
  let reply: (request: IncomingMessage) => { status: number; body: string } | "hang";
  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      const answer = reply(request);
      if (answer === "hang") return;
      response.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );

  /** A LeaseView as the service sends it: the role's epoch is the primary's, or 0 without one. */
  const view = (utype: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ utype, primary: null, epoch: (extra["primary"] as { epoch?: unknown } | undefined)?.epoch ?? 0, intervalMs: 1000, timeoutMs: 5000, ...extra });

  it.each([
    ["a body that is not JSON", () => ({ status: 200, body: "<html>oops" }), /the 200 response body is not JSON/],
    ["another utype than asked", () => ({ status: 200, body: view("broker") }), /asked for utype "scheduler", the answer is about "broker"/],
    ["a missing field", () => ({ status: 200, body: JSON.stringify({ utype: "scheduler", primary: null }) }), /intervalMs and timeoutMs/],
    [
      "a primary without an epoch",
      () => ({ status: 200, body: view("scheduler", { primary: { uuid: "u", address: null, renewedAt: "2026-01-01T00:00:00Z", expiresInMs: 3 } }) }),
      /primary.epoch/,
    ],
    [
      "no role epoch",
      () => ({ status: 200, body: JSON.stringify({ utype: "scheduler", primary: null, intervalMs: 1000, timeoutMs: 5000 }) }),
      /epoch must be a non-negative integer/,
    ],
    ["a negative role epoch", () => ({ status: 200, body: view("scheduler", { epoch: -1 }) }), /epoch must be a non-negative integer/],
    [
      "a role epoch that is not its primary's",
      () => ({ status: 200, body: view("scheduler", { epoch: 4, primary: { uuid: "u", address: null, epoch: 3, renewedAt: "2026-01-01T00:00:00Z", expiresInMs: 3 } }) }),
      /the role's epoch 4 is not its primary's epoch 3/,
    ],
    [
      "a revoked flag that is not a boolean",
      () => ({ status: 200, body: view("scheduler", { primary: { uuid: "u", address: null, epoch: 1, renewedAt: "2026-01-01T00:00:00Z", expiresInMs: 3, revoked: "no" } }) }),
      /primary.revoked must be a boolean/,
    ],
    [
      "a priority that is not an integer of the range",
      () => ({ status: 200, body: view("scheduler", { primary: { uuid: "u", address: null, epoch: 1, renewedAt: "2026-01-01T00:00:00Z", expiresInMs: 3, revoked: false, priority: 2.5 } }) }),
      /primary.priority must be an integer from -1000000 to 1000000/,
    ],
    [
      "a standby's priority out of range",
      () => ({ status: 200, body: view("scheduler", { standbys: [{ uuid: "s", address: null, seenAt: "2026-01-01T00:00:00Z", priority: 1_000_001 }] }) }),
      /standby.priority must be an integer/,
    ],
    [
      "a handover reason it does not know",
      () => ({ status: 200, body: view("scheduler", { handover: { to: "s", requestedAt: "2026-01-01T00:00:00Z", phase: "pending", until: "2026-01-01T00:00:05Z", reason: "whim" } }) }),
      /handover.reason must be "preempt" or absent/,
    ],
  ])("GetPrimary: %s is a CorruptedMessageError", async (_name, answer, message) => {
    reply = answer;
    const error = await fetchError(() => new HaClient({ endpoint }).getPrimary("scheduler"));
    expect(error).toBeInstanceOf(CorruptedMessageError);
    expect((error as Error).message).toMatch(message);
  });

  it("a role without a primary keeps its epoch: the fencing token to seed a downstream target with", async () => {
    reply = () => ({ status: 200, body: view("scheduler", { epoch: 7 }) });
    expect(await new HaClient({ endpoint }).getPrimary("scheduler")).toMatchObject({ primary: null, epoch: 7 });
  });

  it("a primary without `revoked` (a service from before revocation) reads as not revoked", async () => {
    const primary = { uuid: "u", address: null, epoch: 1, renewedAt: "2026-01-01T00:00:00Z", expiresInMs: 3 };
    reply = () => ({ status: 200, body: view("scheduler", { primary }) });
    expect((await new HaClient({ endpoint }).getPrimary("scheduler")).primary).toEqual({ ...primary, revoked: false });
  });

  it("reads priorities (docs/protocol.md#priorities-and-preemption): the holder's, each standby's, a preemption's reason; absent reads as absent (0, an operator's)", async () => {
    const primary = { uuid: "u", address: null, epoch: 1, renewedAt: "2026-01-01T00:00:00Z", expiresInMs: 3, revoked: false, priority: -4 };
    const handover = { to: "s", requestedAt: "2026-01-01T00:00:00Z", phase: "pending", until: "2026-01-01T00:00:05Z", reason: "preempt" };
    const standbys = [
      { uuid: "s", address: "head-1:1", seenAt: "2026-01-01T00:00:00Z", priority: 9 },
      { uuid: "t", address: null, seenAt: "2026-01-01T00:00:00Z" },
    ];
    reply = () => ({ status: 200, body: view("scheduler", { primary, handover, standbys }) });
    expect(await new HaClient({ endpoint }).getPrimary("scheduler", { standbys: true })).toMatchObject({ primary, handover, standbys });
  });

  it("Release sends the token in the query, and reads a revoked holder as `revoked`", async () => {
    let url: string | undefined;
    const primary = { uuid: "me", address: null, epoch: 2, renewedAt: "2026-01-01T00:00:00Z", expiresInMs: 4000, revoked: true };
    reply = (request) => {
      url = request.url;
      return { status: 200, body: view("scheduler", { primary }) };
    };
    const client = new HaClient({ endpoint });
    expect(await client.release("scheduler", "me", { lease: "v2.a+b/c.sig" })).toMatchObject({ outcome: "revoked" });
    expect(url).toBe("/api/primary/scheduler?uuid=me&lease=v2.a%2Bb%2Fc.sig");
    reply = () => ({ status: 409, body: view("scheduler", { primary, error: { code: "LeaseRevoked", message: "ended" } }) });
    expect(await client.heartbeat("scheduler", { uuid: "me" })).toMatchObject({ outcome: "revoked", view: { primary: { uuid: "me" } } });
  });

  it("a gateway's non-JSON error page is a failed call with its status, not a corrupted message", async () => {
    reply = () => ({ status: 502, body: "<html>Bad Gateway</html>" });
    const client = new HaClient({ endpoint });
    await expect(client.getPrimary("scheduler")).rejects.toMatchObject({ name: "HaRequestError", status: 502, code: "UnexpectedResponse", retryable: true });
    reply = () => ({ status: 503, body: "Service Unavailable" });
    await expect(client.health()).rejects.toMatchObject({ name: "HaRequestError", status: 503 });
    reply = () => ({ status: 503, body: JSON.stringify({ error: { code: "StoreUnavailable", message: "m" }, status: "unavailable", store: "table" }) });
    expect(await client.health()).toEqual({ status: "unavailable", store: "table" });
    reply = () => ({ status: 409, body: "not json" });
    await expect(client.heartbeat("scheduler", { uuid: "me" })).rejects.toBeInstanceOf(CorruptedMessageError);
  });

  it("UpdateHeartBeat: an accepted answer that names another holder, or lacks the token, is corrupted", async () => {
    const client = new HaClient({ endpoint });
    const primary = { uuid: "someone-else", address: null, epoch: 1, renewedAt: "2026-01-01T00:00:00Z", expiresInMs: 5000 };
    reply = () => ({ status: 200, body: view("scheduler", { primary, lease: "t" }) });
    await expect(client.heartbeat("scheduler", { uuid: "me" })).rejects.toThrow(/names another primary/);
    reply = () => ({ status: 200, body: view("scheduler", { primary: { ...primary, uuid: "me" } }) });
    await expect(client.heartbeat("scheduler", { uuid: "me" })).rejects.toThrow(/carries no lease token/);
    reply = () => ({ status: 409, body: JSON.stringify({ error: { code: "LeaseHeld", message: "held" } }) });
    await expect(client.heartbeat("scheduler", { uuid: "me" })).rejects.toBeInstanceOf(CorruptedMessageError);
  });

  it("a platform's 404 page (another app, a missing /api) is an EndpointNotFoundError; a 400 is not retryable either", async () => {
    reply = () => ({ status: 404, body: "<html>The resource you are looking for has been removed.</html>" });
    const client = new HaClient({ endpoint });
    const error = await fetchError(() => client.heartbeat("scheduler", { uuid: "me" }));
    expect(error).toMatchObject({ name: "EndpointNotFoundError", status: 404, retryable: false });
    expect((error as Error).message).toBe(
      `UpdateHeartBeat(scheduler): 404 Not Found from ${endpoint}/primary/scheduler. Does your endpoint end in /api? For example http://127.0.0.1:7071/api or https://<app>.azurewebsites.net/api.`,
    );
    reply = () => ({ status: 400, body: JSON.stringify({ error: { code: "InvalidRequest", message: "bad" } }) });
    await expect(client.getPrimary("scheduler")).rejects.toMatchObject({ name: "HaRequestError", code: "InvalidRequest", retryable: false });
  });

  it("sends the heartbeat body and key the contract describes", async () => {
    let seen: { method?: string; url?: string; key?: unknown; body?: string } = {};
    reply = (request) => {
      seen = { method: request.method, url: request.url, key: request.headers["x-functions-key"] };
      return { status: 409, body: view("scheduler", { error: { code: "Conflict", message: "lost" } }) };
    };
    const result = await new HaClient({ endpoint, apiKey: "k1" }).heartbeat("scheduler", { uuid: "me", address: "h:1", lease: "tok" });
    expect(result).toEqual({ outcome: "conflict", view: { utype: "scheduler", primary: null, epoch: 0, intervalMs: 1000, timeoutMs: 5000, handover: null } });
    expect(seen).toEqual({ method: "PUT", url: "/api/primary/scheduler", key: "k1" });
  });

  it("a call that gets no answer fails with Timeout after its timeoutInMs; the caller's abort wins over it", async () => {
    reply = () => "hang";
    const client = new HaClient({ endpoint });
    const timedOut = await fetchError(() => client.getPrimary("scheduler", { timeoutInMs: 50.4 }));
    expect(timedOut).toMatchObject({ name: "HaRequestError", code: "Timeout", retryable: true });
    expect((timedOut as Error).message).toMatch(/within 51 ms/);

    const controller = new AbortController();
    const pending = client.getPrimary("scheduler", { abortSignal: controller.signal, timeoutInMs: 60_000 });
    controller.abort(new Error("caller gave up"));
    await expect(pending).rejects.toThrow("caller gave up");
  });

  it("an unreachable service is a NetworkError", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await fetchError(() => new HaClient({ endpoint: `http://127.0.0.1:${port}/api` }).health());
    expect(error).toMatchObject({ name: "HaRequestError", code: "NetworkError", status: undefined, retryable: true });
  });
});

async function fetchError(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}
