/**
 * The SDK's managed identity, against fake identity endpoints made here (IMDS, App Service's
 * IDENTITY_ENDPOINT, and Microsoft Entra's token endpoint for AKS workload identity): the
 * request each platform expects, the token cached until shortly before it expires, and
 * HaClient sending it as a bearer token, with a 403 an error of its own that no retry fixes.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ForbiddenError, HaClient, ManagedIdentityCredential, UnauthorizedError } from "../../shared/sdk/index.js";

interface Seen {
  method: string;
  url: URL;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server;
let base: string;
const seen: Seen[] = [];
let answer: (request: Seen) => { status: number; body: unknown } = () => ({ status: 200, body: {} });
const dir = mkdtempSync(path.join(os.tmpdir(), "ha-mi-"));

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const entry = { method: request.method ?? "", url: new URL(request.url ?? "/", "http://x"), headers: request.headers, body };
      seen.push(entry);
      const { status, body: reply } = answer(entry);
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  seen.length = 0;
});

describe("ManagedIdentityCredential", () => {
  it("on a VM asks the instance metadata service for the audience, as the user-assigned identity, and keeps the token until 5 minutes before it expires", async () => {
    let now = 1_000_000_000_000;
    answer = () => ({ status: 200, body: { access_token: `imds-${seen.length}`, expires_on: String(now / 1000 + 3600) } });
    const credential = new ManagedIdentityCredential({ audience: "api://ha", clientId: "client-1", env: {}, imdsEndpoint: base, now: () => now });
    expect(credential.description).toBe("managed identity client-1 (instance metadata service) for api://ha");
    expect(await Promise.all([credential.getToken(), credential.getToken()])).toEqual(["imds-1", "imds-1"]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url.pathname).toBe("/metadata/identity/oauth2/token");
    expect(Object.fromEntries(seen[0]!.url.searchParams)).toEqual({ "api-version": "2018-02-01", resource: "api://ha", client_id: "client-1" });
    expect(seen[0]?.headers["metadata"]).toBe("true");
    now += 54 * 60_000;
    expect(await credential.getToken()).toBe("imds-1");
    now += 2 * 60_000;
    expect(await credential.getToken()).toBe("imds-2");
    expect(seen).toHaveLength(2);
  });

  it("in App Service or Functions uses IDENTITY_ENDPOINT with IDENTITY_HEADER", async () => {
    answer = () => ({ status: 200, body: { access_token: "app-service", expires_on: Math.floor(Date.now() / 1000) + 3600 } });
    const credential = new ManagedIdentityCredential({ audience: "api://ha", env: { IDENTITY_ENDPOINT: `${base}/msi/token`, IDENTITY_HEADER: "secret-header" } });
    expect(await credential.getToken()).toBe("app-service");
    expect(seen[0]?.url.pathname).toBe("/msi/token");
    expect(Object.fromEntries(seen[0]!.url.searchParams)).toEqual({ resource: "api://ha", "api-version": "2019-08-01" });
    expect(seen[0]?.headers["x-identity-header"]).toBe("secret-header");
    expect(credential.description).toMatch(/\(system-assigned\) \(App Service identity endpoint\)/);
  });

  it("under AKS workload identity exchanges the pod's federated token at the tenant's token endpoint", async () => {
    const file = path.join(dir, "token");
    writeFileSync(file, "federated-jwt\n");
    answer = () => ({ status: 200, body: { access_token: "workload", expires_in: 3599, token_type: "Bearer" } });
    const env = { AZURE_FEDERATED_TOKEN_FILE: file, AZURE_CLIENT_ID: "wi-client", AZURE_TENANT_ID: "tenant-1", AZURE_AUTHORITY_HOST: `${base}/` };
    const credential = new ManagedIdentityCredential({ audience: "api://ha", env });
    expect(await credential.getToken()).toBe("workload");
    expect(seen[0]?.method).toBe("POST");
    expect(seen[0]?.url.pathname).toBe("/tenant-1/oauth2/v2.0/token");
    expect(Object.fromEntries(new URLSearchParams(seen[0]!.body))).toEqual({
      grant_type: "client_credentials",
      client_id: "wi-client",
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: "federated-jwt",
      scope: "api://ha/.default",
    });
    expect(() => new ManagedIdentityCredential({ audience: "api://ha", env: { AZURE_FEDERATED_TOKEN_FILE: file } })).toThrow(/AZURE_CLIENT_ID and AZURE_TENANT_ID/);
  });

  it("refuses a missing audience where it is given, and says why a token could not be had", async () => {
    expect(() => new ManagedIdentityCredential({ audience: " " })).toThrow(/Expected `audience`/);
    answer = () => ({ status: 400, body: { error: "invalid_resource" } });
    await expect(new ManagedIdentityCredential({ audience: "api://nope", env: {}, imdsEndpoint: base }).getToken()).rejects.toThrow(/Could not get a token for the managed identity.*400.*invalid_resource/);
  });
});

describe("HaClient with a credential", () => {
  it("sends the bearer token instead of the key, names the identity, and a 403 is a ForbiddenError no retry fixes", async () => {
    answer = (request) =>
      request.url.pathname.startsWith("/metadata")
        ? { status: 200, body: { access_token: "the-token", expires_in: 3600 } }
        : { status: 403, body: { error: { code: "Forbidden", message: "no grant" }, missing: { hold: "x" } } };
    const credential = new ManagedIdentityCredential({ audience: "api://ha", env: {}, imdsEndpoint: base });
    const client = new HaClient({ endpoint: `${base}/api`, apiKey: "ignored-key", credential });
    expect(client.identity).toBe("managed identity (system-assigned) (instance metadata service) for api://ha");
    const error = await client.heartbeat("x", { uuid: "u" }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ status: 403, code: "Forbidden", retryable: false, message: expect.stringMatching(/403 Forbidden: no grant.*authenticates as managed identity/) });
    const call = seen.find((request) => request.url.pathname === "/api/primary/x");
    expect(call?.headers["authorization"]).toBe("Bearer the-token");
    expect(call?.headers["x-functions-key"]).toBeUndefined();
  });

  it("a 401 to a token says what is wrong with the token (its audience), not with a function key", async () => {
    answer = (request) =>
      request.url.pathname.startsWith("/metadata")
        ? { status: 200, body: { access_token: "the-token", expires_in: 3600 } }
        : { status: 401, body: { error: { code: "Unauthorized", message: 'The token is for another audience (aud "api://wrong"); request it for api://ha.' } } };
    const client = new HaClient({ endpoint: `${base}/api`, credential: new ManagedIdentityCredential({ audience: "api://wrong", env: {}, imdsEndpoint: base }) });
    const error = await client.getPrimary("x").catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ status: 401, retryable: false, credential: "token" });
    expect((error as Error).message).toMatch(/401 Unauthorized: The token is for another audience .* refused the token of managed identity .* for api:\/\/wrong: ask for the token with the audience the service accepts \(its HA_AUTH_AUDIENCE\)/);
    expect((error as Error).message).not.toMatch(/function key|apiKey|HA_API_KEY/);
    // With a key, the key is what was refused.
    const byKey = await new HaClient({ endpoint: `${base}/api`, apiKey: "k", credential: null }).getPrimary("x").catch((thrown: unknown) => thrown);
    expect(byKey).toMatchObject({ credential: "key", message: expect.stringMatching(/Wrong or missing function key/) });
  });

  it("takes HA_AUTH=managed-identity, HA_AUTH_AUDIENCE and HA_CLIENT_ID from the environment, and refuses HA_AUTH without an audience", () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, { HA_AUTH: "managed-identity", HA_AUTH_AUDIENCE: "api://from-env", HA_CLIENT_ID: "uami-1" });
      expect(new HaClient({ endpoint: `${base}/api` }).identity).toMatch(/^managed identity uami-1 \(.*\) for api:\/\/from-env$/);
      expect(new HaClient({ endpoint: `${base}/api`, credential: null }).identity).toBe("no credentials");
      delete process.env["HA_AUTH_AUDIENCE"];
      expect(() => new HaClient({ endpoint: `${base}/api` })).toThrow(/HA_AUTH=managed-identity needs HA_AUTH_AUDIENCE/);
    } finally {
      for (const name of ["HA_AUTH", "HA_AUTH_AUDIENCE", "HA_CLIENT_ID"]) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });
});
