import { COUNTER_ONLY } from "../helpers/fake-clock.js";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { operations } from "../../functions/routes.js";
import { startLocalHost, type LocalHost } from "../../shared/host/local-host.js";
import { createRuntime } from "../../shared/http/runtime.js";
import { UnauthorizedError } from "../../shared/sdk/auth/unauthorized-error.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { EndpointNotFoundError } from "../../shared/sdk/transport/endpoint-not-found-error.js";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { isServiceDown } from "../../shared/sdk/transport/service-down.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";

/**
 * HaClient with several endpoints (docs/sdk.md#several-endpoints) against real local HTTP
 * servers: the real service, and the ways an instance is lost — a port nothing listens on
 * (a killed process), one that answers 503, one that accepts connections and never answers.
 */
const timing = { intervalMs: 200, timeoutMs: 1500 };

interface Stand {
  readonly url: string;
  /** Requests it got. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** A server that answers every request with `answer`, or never when it is undefined. */
async function stand(answer: ((response: ServerResponse) => void) | undefined): Promise<Stand> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    answer?.(response);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: connections to it are refused, as to a killed instance's. */
async function refusedUrl(): Promise<string> {
  const closed = await stand(undefined);
  await closed.close();
  return closed.url;
}

const unavailable = (response: ServerResponse): void => {
  response.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
  response.end(JSON.stringify({ error: { code: "StoreUnavailable", message: "The lease store is unavailable; retry shortly." } }));
};

describe("HaClient with several endpoints", () => {
  let service: LocalHost;
  let keyed: LocalHost;
  const stands: Stand[] = [];
  beforeAll(async () => {
    const runtime = createRuntime({ timing, storeTimeoutMs: 2000, leaseSecret: "one-secret-for-both-instances-of-the-service" }, { epochClock: COUNTER_ONLY, leases: new MemoryLeaseStore() });
    service = await startLocalHost({ operations, runtime: async () => runtime, port: 0, log: () => undefined });
    keyed = await startLocalHost({ operations, runtime: async () => runtime, port: 0, apiKey: "the-right-key", log: () => undefined });
  });
  afterAll(async () => {
    await Promise.all([service.close(), keyed.close(), ...stands.map((each) => each.close())]);
  });
  afterEach(() => void vi.unstubAllEnvs());

  const standing = async (answer: ((response: ServerResponse) => void) | undefined): Promise<Stand> => {
    const made = await stand(answer);
    stands.push(made);
    return made;
  };

  it("takes a list, an array or a comma-separated string (HA_ENDPOINT too), each checked, none twice", () => {
    const list = new HaClient({ endpoint: ["http://a:7071/api/", "http://b:7071/api"] });
    expect(list.endpoints).toEqual(["http://a:7071/api", "http://b:7071/api"]);
    expect(list.endpoint).toBe("http://a:7071/api");
    expect(new HaClient({ endpoint: "http://a:7071/api, http://b:7071/api" }).endpoints).toEqual(["http://a:7071/api", "http://b:7071/api"]);
    vi.stubEnv("HA_ENDPOINT", "http://a:7071/api,http://b:7071/api");
    expect(new HaClient().endpoints).toEqual(["http://a:7071/api", "http://b:7071/api"]);
    expect(new PrimaryElector({ utype: "x" }).utype).toBe("x");
    expect(() => new HaClient({ endpoint: ["http://a:7071/api", "b:7071/api"] })).toThrow('Expected `endpoint[1]` to be an http(s) URL such as http://127.0.0.1:7071/api, got "b:7071/api".');
    expect(() => new HaClient({ endpoint: "http://a:7071/api," })).toThrow("Expected `endpoint[1]` to be an http(s) URL");
    vi.stubEnv("HA_ENDPOINT", "http://a:7071/api,,http://b:7071/api");
    expect(() => new HaClient()).toThrow("Expected `HA_ENDPOINT[1]` to be an http(s) URL");
    expect(() => new HaClient({ endpoint: [] })).toThrow("Expected `endpoint` to name at least one URL such as http://127.0.0.1:7071/api, got an empty list.");
    expect(() => new HaClient({ endpoint: ["http://A:80/api", "http://a/api/"] })).toThrow(
      "Expected `endpoint` to list each endpoint once, but http://a/api is at places 0 and 1: remove one (a list names several instances of the service).",
    );
    expect(() => new PrimaryElector({ utype: "x", endpoint: ["http://a/api", "http://a/api"] })).toThrow("to list each endpoint once");
  });

  it("a killed instance (connection refused): the call goes on to the next in the same call, and the next call starts there", async () => {
    const down = await refusedUrl();
    const client = new HaClient({ endpoint: [down, service.url] });
    expect((await client.getPrimary("refused")).utype).toBe("refused");
    expect(client.endpoint).toBe(service.url);
  });

  it("an instance answering 503: on to the next; it is not asked again while the next answers", async () => {
    const failing = await standing(unavailable);
    const client = new HaClient({ endpoint: [failing.url, service.url] });
    const held = await client.heartbeat("five-oh-three", { uuid: "u1" });
    expect(held.outcome).toBe("accepted");
    expect(failing.requests).toEqual(["PUT /api/primary/five-oh-three"]);
    await client.getPrimary("five-oh-three");
    await client.listPrimaries();
    expect(failing.requests).toHaveLength(1);
  });

  it("a silent instance (accepts, never answers): a call with its own budget times out naming it, and the next call goes to the next", async () => {
    const silent = await standing(undefined);
    const client = new HaClient({ endpoint: [silent.url, service.url] });
    const error = await client.getPrimary("silent", { timeoutInMs: 200 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HaRequestError);
    expect(error).toMatchObject({ code: "Timeout", retryable: true, message: `GetPrimary(silent): no answer from ${silent.url} within 200 ms.` });
    expect((await client.getPrimary("silent", { timeoutInMs: 2000 })).utype).toBe("silent");
    expect(silent.requests).toHaveLength(1);
  });

  it("a silent instance and a call that names no budget (one-shot): the next endpoint is asked after its share, and its answer counts", async () => {
    const silent = await standing(undefined);
    const client = new HaClient({ endpoint: [silent.url, service.url], timeoutInMs: 1000 });
    const view = await client.getPrimary("split");
    expect(view.utype).toBe("split");
    expect(silent.requests).toHaveLength(1);
    expect(client.endpoint).toBe(service.url);
  });

  it("every instance lost: one error that names each, and a refused connection everywhere is a service that is down", async () => {
    const [first, second] = [await refusedUrl(), await refusedUrl()];
    const error = await new HaClient({ endpoint: [first, second] }).getPrimary("gone").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "NetworkError", retryable: true });
    expect((error as Error).message).toMatch(new RegExp(`^GetPrimary\\(gone\\): could not reach ${first} \\(connect ECONNREFUSED [^)]+\\), nor ${second} \\(connect ECONNREFUSED [^)]+\\)\\.$`));
    expect(isServiceDown(error)).toBe(true);
    // One lost, one answering 503: the service's own word, with its Retry-After.
    const failing = await standing(unavailable);
    const mixed = await new HaClient({ endpoint: [first, failing.url] }).getPrimary("gone").catch((caught: unknown) => caught);
    expect(mixed).toMatchObject({ code: "StoreUnavailable", status: 503, retryAfterMs: 1000 });
    expect(isServiceDown(mixed)).toBe(true);
  });

  it("a 4xx never moves on (every instance answers it alike), and names the endpoint that answered", async () => {
    const notTheService = await standing((response) => {
      response.writeHead(404, { "content-type": "text/plain" });
      response.end("Not Found");
    });
    const client = new HaClient({ endpoint: [notTheService.url, service.url] });
    const notFound = await client.getPrimary("four").catch((caught: unknown) => caught);
    expect(notFound).toBeInstanceOf(EndpointNotFoundError);
    expect(notFound).toMatchObject({ endpoint: notTheService.url, message: expect.stringContaining(`404 Not Found from ${notTheService.url}/primary/four`) });
    const down = await refusedUrl();
    const unauthorized = await new HaClient({ endpoint: [down, keyed.url], apiKey: "a-wrong-key" }).getPrimary("four").catch((caught: unknown) => caught);
    expect(unauthorized).toBeInstanceOf(UnauthorizedError);
    expect(unauthorized).toMatchObject({ endpoint: keyed.url, message: expect.stringContaining(`Wrong or missing function key for ${keyed.url}`) });
  });

  it("a lease token from one instance is taken by another only when they share HA_LEASE_SECRET: otherwise a release after a failover is a revoke", async () => {
    const leases = new MemoryLeaseStore();
    const instance = async (leaseSecret: string | undefined): Promise<LocalHost> => {
      const runtime = createRuntime({ timing, storeTimeoutMs: 2000, leaseSecret }, { epochClock: COUNTER_ONLY, leases });
      const host = await startLocalHost({ operations, runtime: async () => runtime, port: 0, log: () => undefined });
      stands.push({ url: host.url, requests: [], close: () => host.close() });
      return host;
    };
    const secret = "one-secret-for-every-instance-on-this-store";
    const [first, sharing, own] = [await instance(secret), await instance(secret), await instance(undefined)];
    const acquire = async (uuid: string): Promise<string> => {
      const acquired = await new HaClient({ endpoint: first.url }).heartbeat("token", { uuid });
      if (acquired.outcome !== "accepted") throw new Error(acquired.outcome);
      return acquired.lease;
    };
    const failing = await standing(unavailable);
    const shared = await new HaClient({ endpoint: [failing.url, sharing.url] }).release("token", "t1", { lease: await acquire("t1") });
    expect(shared).toMatchObject({ outcome: "released", view: { primary: null } });
    const drawn = await new HaClient({ endpoint: [failing.url, own.url] }).release("token", "t2", { lease: await acquire("t2") });
    expect(drawn).toMatchObject({ outcome: "revoked", view: { primary: { uuid: "t2", revoked: true } } });
  });
});
