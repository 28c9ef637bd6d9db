/**
 * The local host enforces the same grants as the Azure app, with several named keys
 * (HA_API_KEYS, HA_API_KEY as the key named "default") and Entra tokens of a local issuer:
 * over HTTP, every write route outside a caller's grant is 403 and reaches no store.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { loadAuthConfig } from "../../shared/config/auth-config.js";
import { ConfigError } from "../../shared/config/config-error.js";
import { startLocalHost, type LocalHost } from "../../shared/host/local-host.js";
import { createAccess } from "../../shared/http/access.js";
import { createRuntime } from "../../shared/http/runtime.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { CountingMemberStore } from "../helpers/counting-member-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { GRANTS, grantSettings, HEAD_A, HEAD_B, KEYS } from "../helpers/grants-fixture.js";
import { LocalIssuer } from "../helpers/local-issuer.js";

let issuer: LocalIssuer;
let host: LocalHost;
let leases: CountingStore;
let members: CountingMemberStore;

beforeAll(async () => {
  issuer = await LocalIssuer.start();
  leases = new CountingStore(new MemoryLeaseStore());
  members = new CountingMemberStore(new MemoryMemberStore());
  const runtime = createRuntime({ timing: { intervalMs: 1000, timeoutMs: 5000 }, storeTimeoutMs: 2000, leaseSecret: "a-test-secret-that-is-long-enough-for-hmac" }, { leases, members });
  const env = { ...grantSettings(issuer.authority), HA_GRANTS: JSON.stringify([...GRANTS, { callers: ["key:default"], hold: ["lab.*"] }]) };
  host = await startLocalHost({ operations, runtime: async () => runtime, port: 0, access: createAccess(loadAuthConfig(env, "the-default-key-0123456789")), log: () => undefined });
}, 30_000);
afterAll(async () => {
  await Promise.all([host?.close(), issuer?.close()]);
});
beforeEach(() => {
  leases.reset();
  members.reset();
});

async function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${host.url}/${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const key = (name: keyof typeof KEYS): Record<string, string> => ({ "x-functions-key": KEYS[name] });

describe("grants on the local host", () => {
  it("refuses each write route outside the caller's grant with 403, before the store", async () => {
    const refusals = [
      ["PUT", "primary/cluster-b.scheduler", key("head-a"), { uuid: "a1" }, { hold: "cluster-b.scheduler", caller: "key:head-a" }],
      ["PUT", "primary/cluster-a.scheduler", { authorization: `Bearer ${issuer.token(HEAD_B)}` }, { uuid: "b1" }, { hold: "cluster-a.scheduler", caller: HEAD_B.oid }],
      ["DELETE", "primary/cluster-b.scheduler?uuid=b1", key("head-a"), undefined, { revoke: "cluster-b.scheduler" }],
      ["PUT", "members/cluster-b/n1", key("head-a"), { session: "s1" }, { join: "cluster-b" }],
      ["DELETE", "members/cluster-b/n1?session=s1", { authorization: `Bearer ${issuer.token(HEAD_A)}` }, undefined, { join: "cluster-b", caller: HEAD_A.oid }],
      ["PUT", "primary/cluster-a.x", { "x-functions-key": "the-default-key-0123456789" }, { uuid: "d1" }, { hold: "cluster-a.x", caller: "key:default" }],
    ] as const;
    for (const [method, path, headers, body, missing] of refusals) {
      const answer = await send(method, path, headers, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body).toMatchObject({ error: { code: "Forbidden", message: expect.stringMatching(/no grant of HA_GRANTS/) }, missing });
    }
    expect(leases.calls).toEqual([]);
    expect(members.calls).toEqual([]);
  });

  it("lets each caller write within its grant, by key, by token, and HA_API_KEY as key:default", async () => {
    expect((await send("PUT", "primary/cluster-a.scheduler", key("head-a"), { uuid: "a1" })).status).toBe(200);
    expect((await send("PUT", "primary/cluster-a.web", { authorization: `Bearer ${issuer.token(HEAD_A)}` }, { uuid: "a2" })).status).toBe(200);
    expect((await send("PUT", "primary/lab.one", { "x-functions-key": "the-default-key-0123456789" }, { uuid: "d1" })).status).toBe(200);
    expect((await send("PUT", "members/cluster-b/n1", key("head-b"), { session: "s1" })).status).toBe(200);
    expect((await send("DELETE", "primary/cluster-a.scheduler?uuid=a1", key("ops"))).body).toMatchObject({ primary: { revoked: true } });
    expect((await send("GET", "primary", { authorization: `Bearer ${issuer.token(HEAD_B)}` })).status).toBe(200);
  });

  it("answers 401 before routing to a caller with no key, a wrong key or a bad token", async () => {
    for (const headers of [{}, { "x-functions-key": "wrong-key-0123456789abcdef" } as Record<string, string>, { authorization: `Bearer ${issuer.token(HEAD_A, { claims: { aud: "api://other" } })}` }]) {
      expect((await send("GET", "no-such-route", headers)).status).toBe(401);
      expect((await send("PUT", "primary/cluster-a.scheduler", headers, { uuid: "a1" })).status).toBe(401);
    }
    expect(leases.calls).toEqual([]);
  });
});

describe("the local host's auth settings", () => {
  const refused = (env: Record<string, string>, defaultKey?: string): ConfigError => {
    try {
      loadAuthConfig(env, defaultKey);
    } catch (error) {
      if (error instanceof ConfigError) return error;
      throw error;
    }
    throw new Error("accepted");
  };

  it("name the setting and what to change", () => {
    expect(refused({ HA_GRANTS: "[]" })).toMatchObject({ setting: "HA_GRANTS", message: expect.stringMatching(/no caller proves who it is/) });
    expect(refused({ HA_GRANTS: "{", HA_API_KEYS: `ops=${KEYS.ops}` })).toMatchObject({ setting: "HA_GRANTS", message: expect.stringMatching(/must be JSON/) });
    expect(refused({ HA_GRANTS: '[{"callers":["key:ops"],"hold":["a b"]}]', HA_API_KEYS: `ops=${KEYS.ops}` }).message).toMatch(/"hold" of grant 1 of HA_GRANTS has the pattern "a b"/);
    expect(refused({ HA_GRANTS: '[{"callers":["key:ops"],"holds":["x"]}]', HA_API_KEYS: `ops=${KEYS.ops}` }).message).toMatch(/field "holds"/);
    expect(refused({ HA_GRANTS: `[{"callers":["${HEAD_A.oid}"],"hold":["x"]}]`, HA_API_KEYS: `ops=${KEYS.ops}` }).message).toMatch(/tokens are not accepted: set HA_AUTH_TENANT_ID/);
    expect(refused({ HA_API_KEYS: "ops=short" })).toMatchObject({ setting: "HA_API_KEYS", message: expect.stringMatching(/at least 16 characters/) });
    expect(refused({ HA_API_KEYS: `default=${KEYS.ops}` }, "x".repeat(20)).message).toMatch(/twice \(HA_API_KEY is the key named default\)/);
    expect(refused({ HA_API_KEYS: "@Microsoft.KeyVault(SecretUri=https://v.vault.azure.net/secrets/keys/)" }).message).toMatch(/Key Vault reference the platform could not resolve/);
    expect(refused({ HA_AUTH_AUDIENCE: "api://x" })).toMatchObject({ setting: "HA_AUTH_TENANT_ID" });
    expect(refused({ HA_AUTH_TENANT_ID: "contoso" })).toMatchObject({ setting: "HA_AUTH_TENANT_ID" });
    expect(refused({ HA_AUTH_TENANT_ID: HEAD_A.oid })).toMatchObject({ setting: "HA_AUTH_AUDIENCE" });
    expect(refused({ HA_AUTH_TENANT_ID: HEAD_A.oid, HA_AUTH_AUDIENCE: "api://x", HA_AUTH_AUTHORITY: "http://login.example" })).toMatchObject({ setting: "HA_AUTH_AUTHORITY" });
  });
});
