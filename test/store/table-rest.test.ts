import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AzureNamedKeyCredential, generateAccountSas, TableClient } from "@azure/data-tables";
import type { AccessToken, TokenCredential } from "@azure/identity";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { createTableStore } from "../../shared/store/create-table-store.js";
import { describeTableError, errorCodeOf, isEntityNotFound, statusOf } from "../../shared/store/table-errors.js";
import { sharedKeyFromConnectionString, TableConnections, TableRest, type TableAuth } from "../../shared/store/table-rest.js";
import { int64, lostTableRace } from "../../shared/store/table-values.js";
import { startTestAzurite } from "../helpers/azurite.js";

/** The store's own Table client, on Azurite (which checks SharedKeyLite signatures) and on stand-in servers. */

const connections = new TableConnections();
afterAll(() => connections.close());

/** What a call failed with, for the checks table-errors.ts and table-values.ts make. */
async function failureOf(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error("The call succeeded.");
}

describe("the Table REST client on Azurite", () => {
  let azurite: EmbeddedAzurite;
  let sdk: TableClient;
  let rest: TableRest;
  const tableName = `rest${process.pid}`;

  beforeAll(async () => {
    azurite = await startTestAzurite();
    sdk = TableClient.fromConnectionString(azurite.connectionString, tableName, { allowInsecureConnection: true });
    await sdk.createTable();
    const { endpoint, auth } = sharedKeyFromConnectionString(azurite.connectionString)!;
    rest = new TableRest(endpoint, tableName, auth, connections);
  });
  afterAll(async () => azurite.close());

  it("signs with SharedKeyLite: the account key is accepted, another key refused with 403", async () => {
    const { endpoint, auth } = sharedKeyFromConnectionString(azurite.connectionString)!;
    await rest.upsertEntity({ partitionKey: "signed", rowKey: "r", note: "it's me" });
    expect(await rest.getEntity("signed", "r")).toMatchObject({ partitionKey: "signed", rowKey: "r", note: "it's me" });
    const wrongKey: TableAuth = { kind: "shared-key", account: auth.kind === "shared-key" ? auth.account : "", key: Buffer.from("not the key").toString("base64") };
    const refused = await failureOf(new TableRest(endpoint, tableName, wrongKey, connections).getEntity("signed", "r"));
    expect(statusOf(refused)).toBe(403);
  });

  it("writes Int64 as Edm.Int64 (the SDK reads it as one) and reads the SDK's Int64 back as a number", async () => {
    const big = 2 ** 40 + 7;
    await rest.upsertEntity({ partitionKey: "int64", rowKey: "mine", renewedAt: int64(big), uuid: "u" });
    const seen = await sdk.getEntity<Record<string, unknown>>("int64", "mine", { disableTypeConversion: true });
    expect(seen.renewedAt).toEqual({ value: String(big), type: "Int64" });
    await sdk.upsertEntity({ partitionKey: "int64", rowKey: "theirs", epoch: int64(big + 1), small: 3 }, "Replace");
    const row = await rest.getEntity("int64", "theirs");
    expect(row.epoch).toBe(big + 1);
    expect(row.small).toBe(3);
    expect(row.etag).toBe((await sdk.getEntity("int64", "theirs")).etag);
  });

  it("updates only on a matching ETag: Merge keeps what it does not name, Replace drops it, and each answers the new ETag", async () => {
    await rest.upsertEntity({ partitionKey: "update", rowKey: "r", a: "1", b: "2" });
    const first = await rest.getEntity("update", "r");
    const merged = await rest.updateEntity({ partitionKey: "update", rowKey: "r", a: "3" }, "Merge", first.etag);
    const afterMerge = await rest.getEntity("update", "r");
    expect(afterMerge).toMatchObject({ a: "3", b: "2", etag: merged.etag });
    const replaced = await rest.updateEntity({ partitionKey: "update", rowKey: "r", a: "4" }, "Replace", afterMerge.etag);
    const afterReplace = await rest.getEntity("update", "r");
    expect(afterReplace).toMatchObject({ a: "4", etag: replaced.etag });
    expect(afterReplace).not.toHaveProperty("b");
  });

  it("maps a stale ETag to 412 `changed`, a missing row to 404 `missing` and a missing table to TableNotFound (not the entity)", async () => {
    await rest.upsertEntity({ partitionKey: "race", rowKey: "r", a: "1" });
    const { etag } = await rest.getEntity("race", "r");
    await rest.updateEntity({ partitionKey: "race", rowKey: "r", a: "2" }, "Merge", etag);
    const stale = await failureOf(rest.updateEntity({ partitionKey: "race", rowKey: "r", a: "3" }, "Merge", etag));
    expect(statusOf(stale)).toBe(412);
    expect(lostTableRace(stale, "update")).toEqual({ ok: false, reason: "changed" });

    const gone = await failureOf(rest.updateEntity({ partitionKey: "race", rowKey: "never" }, "Replace", etag));
    expect(lostTableRace(gone, "update")).toEqual({ ok: false, reason: "missing" });
    const unread = await failureOf(rest.getEntity("race", "never"));
    expect(isEntityNotFound(unread)).toBe(true);

    const { endpoint, auth } = sharedKeyFromConnectionString(azurite.connectionString)!;
    const noTable = await failureOf(new TableRest(endpoint, "nosuchtable", auth, connections).getEntity("race", "r"));
    expect(statusOf(noTable)).toBe(404);
    expect(errorCodeOf(noTable)).toBe("TableNotFound");
    expect(isEntityNotFound(noTable)).toBe(false);
    expect(lostTableRace(noTable, "update")).toBeUndefined();
  });

  it("queries one partition, keys with quotes and spaces included, each row with its ETag", async () => {
    await rest.upsertEntity({ partitionKey: "o'brien group", rowKey: "a b", n: int64(1) });
    await rest.upsertEntity({ partitionKey: "o'brien group", rowKey: "c'd", n: int64(2) });
    await rest.upsertEntity({ partitionKey: "other", rowKey: "x", n: int64(3) });
    const rows = await rest.queryEntities("PartitionKey eq 'o''brien group'");
    expect(rows.map((row) => [row.rowKey, row.n])).toEqual([
      ["a b", 1],
      ["c'd", 2],
    ]);
    for (const row of rows) expect(row.etag).toBe((await rest.getEntity(row.partitionKey, row.rowKey)).etag);
  });
});

/** A stand-in Table endpoint on 127.0.0.1: every request recorded, each answered by `answer`. */
interface StandIn {
  readonly endpoint: string;
  readonly requests: { method: string; url: string; headers: IncomingMessage["headers"] }[];
  answer: (request: IncomingMessage, response: ServerResponse, index: number) => void;
}

let server: Server | undefined;
async function standIn(answer: StandIn["answer"]): Promise<StandIn> {
  const stand: StandIn = { endpoint: "", requests: [], answer };
  server = createServer((request, response) => {
    stand.requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers });
    request.resume();
    request.on("end", () => stand.answer(request, response, stand.requests.length - 1));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return Object.assign(stand, { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/acct` });
}
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

const KEY: TableAuth = { kind: "shared-key", account: "acct", key: Buffer.from("key").toString("base64") };
const odataError = (code: string) => JSON.stringify({ "odata.error": { code, message: { lang: "en-US", value: `${code} here` } } });

describe("the Table REST client on a stand-in server", () => {
  it("follows x-ms-continuation-NextPartitionKey / NextRowKey until the last page", async () => {
    const stand = await standIn((_request, response, index) => {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (index === 0) Object.assign(headers, { "x-ms-continuation-NextPartitionKey": "1!8!cGFydA--", "x-ms-continuation-NextRowKey": "1!4!cg--" });
      if (index === 1) headers["x-ms-continuation-NextPartitionKey"] = "1!8!bGFzdA--";
      response.writeHead(200, headers).end(JSON.stringify({ value: [{ PartitionKey: "p", RowKey: `r${index}`, "odata.etag": `e${index}` }] }));
    });
    const rows = await new TableRest(stand.endpoint, "t", KEY, connections).queryEntities("PartitionKey eq 'p'");
    expect(rows.map((row) => [row.rowKey, row.etag])).toEqual([
      ["r0", "e0"],
      ["r1", "e1"],
      ["r2", "e2"],
    ]);
    const queries = stand.requests.map((request) => new URL(request.url, "http://x").searchParams);
    expect(queries.map((query) => query.get("$filter"))).toEqual(["PartitionKey eq 'p'", "PartitionKey eq 'p'", "PartitionKey eq 'p'"]);
    expect(queries.map((query) => [query.get("NextPartitionKey"), query.get("NextRowKey")])).toEqual([
      [null, null],
      ["1!8!cGFydA--", "1!4!cg--"],
      ["1!8!bGFzdA--", null],
    ]);
    expect(stand.requests[0]!.url.startsWith("/acct/t()?")).toBe(true);
  });

  it("signs the date and the path as sent, and asks for version 2019-02-02 JSON", async () => {
    const stand = await standIn((_request, response) => response.writeHead(200, { etag: 'W/"1"' }).end(JSON.stringify({ PartitionKey: "p", RowKey: "r" })));
    await new TableRest(stand.endpoint, "t", KEY, connections).getEntity("p", "r");
    const { url, headers } = stand.requests[0]!;
    expect(url).toBe("/acct/t(PartitionKey='p',RowKey='r')");
    const { createHmac } = await import("node:crypto");
    const expected = createHmac("sha256", Buffer.from("key")).update(`${headers["x-ms-date"]}\n/acct${url}`).digest("base64");
    expect(headers.authorization).toBe(`SharedKeyLite acct:${expected}`);
    expect(headers["x-ms-version"]).toBe("2019-02-02");
    expect(headers.accept).toMatch(/^application\/json;odata=(minimal|no)metadata$/);
  });

  it("carries the status and the service's code of a 409, so that a create's conflict reads as `exists`", async () => {
    const stand = await standIn((_request, response) => response.writeHead(409, { "content-type": "application/json" }).end(odataError("EntityAlreadyExists")));
    const conflict = await failureOf(new TableRest(stand.endpoint, "t", KEY, connections).upsertEntity({ partitionKey: "p", rowKey: "r" }));
    expect(statusOf(conflict)).toBe(409);
    expect(errorCodeOf(conflict)).toBe("EntityAlreadyExists");
    expect(lostTableRace(conflict, "create")).toEqual({ ok: false, reason: "exists" });
    expect(stand.requests).toHaveLength(1);
  });

  it("retries a transient answer (5xx, 429) at most twice, then reports it; never retries a 412, a 501 or a 505", async () => {
    const stand = await standIn((_request, response) => response.writeHead(503, { "content-type": "application/json" }).end(odataError("ServerBusy")));
    const rest = new TableRest(stand.endpoint, "t", KEY, connections);
    const busy = await failureOf(rest.getEntity("p", "r"));
    expect(describeTableError(busy)).toBe("HTTP 503 ServerBusy");
    expect(stand.requests).toHaveLength(3);

    stand.requests.length = 0;
    stand.answer = (_request, response, index) => (index === 0 ? response.writeHead(500).end() : response.writeHead(204, { etag: 'W/"2"' }).end());
    expect(await rest.updateEntity({ partitionKey: "p", rowKey: "r" }, "Merge", 'W/"1"')).toEqual({ etag: 'W/"2"' });
    expect(stand.requests).toHaveLength(2);

    stand.requests.length = 0;
    stand.answer = (_request, response, index) => (index === 0 ? response.writeHead(429).end() : response.writeHead(204).end());
    await rest.upsertEntity({ partitionKey: "p", rowKey: "r" });
    expect(stand.requests).toHaveLength(2);

    for (const status of [412, 501, 505]) {
      stand.requests.length = 0;
      stand.answer = (_request, response) => response.writeHead(status).end();
      expect(statusOf(await failureOf(rest.updateEntity({ partitionKey: "p", rowKey: "r" }, "Merge", 'W/"1"')))).toBe(status);
      expect(stand.requests).toHaveLength(1);
    }
  });

  it("retries a dropped connection at most twice", async () => {
    const stand = await standIn((request) => request.socket.destroy());
    const dropped = await failureOf(new TableRest(stand.endpoint, "t", KEY, connections).getEntity("p", "r"));
    expect(statusOf(dropped)).toBeUndefined();
    expect(stand.requests).toHaveLength(3);
  });

  it("ends a call, and its retries, when its signal fires: an AbortError the store reports as timed out", async () => {
    const stand = await standIn(() => undefined);
    const rest = new TableRest(stand.endpoint, "t", KEY, connections);
    const controller = new AbortController();
    const pending = failureOf(rest.getEntity("p", "r", { abortSignal: controller.signal }));
    while (stand.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const aborted = await pending;
    expect((aborted as Error).name).toBe("AbortError");
    expect(describeTableError(aborted)).toBe("timed out");

    stand.requests.length = 0;
    stand.answer = (_request, response) => response.writeHead(503).end();
    const busy = new AbortController();
    const retrying = failureOf(rest.getEntity("p", "r", { abortSignal: busy.signal }));
    while (stand.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    busy.abort();
    expect((await retrying as Error).name).toBe("AbortError");
    expect(stand.requests).toHaveLength(1);
    await expect(rest.getEntity("p", "r", { abortSignal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
    expect(stand.requests).toHaveLength(1);
  });

  it("authorizes with a storage bearer token, fetched once and again only shortly before it expires", async () => {
    const stand = await standIn((_request, response) => response.writeHead(204, { etag: 'W/"9"' }).end());
    const scopes: string[] = [];
    let expiresIn = 60 * 60_000;
    const credential: TokenCredential = {
      getToken: async (scope) => {
        scopes.push(String(scope));
        return { token: `token-${scopes.length}`, expiresOnTimestamp: Date.now() + expiresIn } satisfies AccessToken;
      },
    };
    const rest = new TableRest(stand.endpoint, "t", { kind: "bearer", credential }, connections);
    await Promise.all([rest.upsertEntity({ partitionKey: "p", rowKey: "a" }), rest.upsertEntity({ partitionKey: "p", rowKey: "b" })]);
    await rest.upsertEntity({ partitionKey: "p", rowKey: "c" });
    expect(scopes).toEqual(["https://storage.azure.com/.default"]);
    for (const { headers } of stand.requests) {
      expect(headers.authorization).toBe("Bearer token-1");
      expect(headers["x-ms-version"]! >= "2019-02-02").toBe(true);
      expect(headers["x-ms-date"]).toBeTruthy();
    }
    // A token a minute from expiry is not used again: each call fetches a new one.
    expiresIn = 60_000;
    const shortLived = new TableRest(stand.endpoint, "t", { kind: "bearer", credential }, connections);
    await shortLived.upsertEntity({ partitionKey: "p", rowKey: "d" });
    await shortLived.upsertEntity({ partitionKey: "p", rowKey: "e" });
    expect(scopes).toHaveLength(3);
    expect(stand.requests.at(-1)!.headers.authorization).toBe("Bearer token-3");
  });

  it("reports a credential that gives no token at once, without retrying it or sending the request", async () => {
    const stand = await standIn((_request, response) => response.writeHead(204).end());
    let asked = 0;
    const credential: TokenCredential = {
      getToken: async () => {
        asked += 1;
        throw new Error("ManagedIdentityCredential: no identity here");
      },
    };
    await expect(new TableRest(stand.endpoint, "t", { kind: "bearer", credential }, connections).upsertEntity({ partitionKey: "p", rowKey: "r" })).rejects.toThrow(/no identity here/);
    expect(asked).toBe(1);
    expect(stand.requests).toHaveLength(0);
  });

  it("refuses to send a bearer token over plain http to another machine", () => {
    const credential: TokenCredential = { getToken: async () => ({ token: "secret", expiresOnTimestamp: Date.now() + 3_600_000 }) };
    expect(() => new TableRest("http://acct.table.core.windows.net", "t", { kind: "bearer", credential }, connections)).toThrow(/https only/);
    expect(() => new TableRest("https://acct.table.core.windows.net", "t", { kind: "bearer", credential }, connections)).not.toThrow();
  });
});

describe("a connection string with a SAS token instead of a key", () => {
  let azurite: EmbeddedAzurite;
  beforeAll(async () => {
    azurite = await startTestAzurite();
  });
  afterAll(async () => azurite.close());

  it("keeps the store on the SDK, which signs with the token: reads, If-Match merges and queries work", async () => {
    const tableName = `sas${process.pid}`;
    await TableClient.fromConnectionString(azurite.connectionString, tableName, { allowInsecureConnection: true }).createTable();
    const account = /AccountName=([^;]+)/.exec(azurite.connectionString)![1]!;
    const key = /AccountKey=([^;]+)/.exec(azurite.connectionString)![1]!;
    const endpoint = /TableEndpoint=([^;]+)/.exec(azurite.connectionString)![1]!;
    const sas = generateAccountSas(new AzureNamedKeyCredential(account, key), { permissions: { query: true, write: true, delete: true, list: true, add: true, update: true }, resourceTypes: "sco", expiresOn: new Date(Date.now() + 3_600_000) });
    const configured = createTableStore({
      kind: "table",
      tableName,
      membersTableName: tableName,
      connection: { mode: "connection-string", connectionString: `TableEndpoint=${endpoint};SharedAccessSignature=${sas}` },
      createIfMissing: false,
    });
    try {
      const { store } = configured;
      expect(await store.create({ utype: "sas", uuid: "u", address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] })).toMatchObject({ ok: true });
      const read = await store.read("sas");
      expect(await store.renew("sas", { renewedAt: 2 }, read!.etag)).toMatchObject({ ok: true });
      expect(await store.list()).toMatchObject([{ utype: "sas", renewedAt: 2 }]);
    } finally {
      configured.close();
    }
  });
});

describe("connection strings for the store's own client", () => {
  it("reads the key and the endpoint, Azurite's development account, or leaves a SAS string to the SDK", () => {
    expect(sharedKeyFromConnectionString("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net")).toEqual({
      endpoint: "https://acct.table.core.windows.net",
      auth: { kind: "shared-key", account: "acct", key: "a2V5" },
    });
    expect(sharedKeyFromConnectionString("AccountName=acct;AccountKey=a2V5==;TableEndpoint=http://127.0.0.1:1/acct;")).toMatchObject({ endpoint: "http://127.0.0.1:1/acct", auth: { key: "a2V5==" } });
    expect(sharedKeyFromConnectionString("UseDevelopmentStorage=true")).toMatchObject({ endpoint: "http://127.0.0.1:10002/devstoreaccount1", auth: { account: "devstoreaccount1" } });
    expect(sharedKeyFromConnectionString("TableEndpoint=https://acct.table.core.windows.net;SharedAccessSignature=sv=2020&sig=x")).toBeUndefined();
  });
});
