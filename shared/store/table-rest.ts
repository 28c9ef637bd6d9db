import { createHmac } from "node:crypto";
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { RestError, type TableClient } from "@azure/data-tables";
import type { AccessToken, TokenCredential } from "@azure/identity";
import type { StoreCallOptions } from "../service/store-call.js";

/**
 * The Table calls a heartbeat makes (a point read, an If-Match update, a standby's upsert,
 * a partition query), on node:http with a keep-alive agent instead of @azure/data-tables.
 * Measured against Azurite, the SDK's serializer and pipeline cost about twice the CPU of
 * the request itself (getEntity 0.35 ms against 0.19 ms, an If-Match Merge 0.50 ms against
 * 0.24 ms), and the service spends most of its time on these four calls. Everything else
 * (creating tables, creates, deletes, transactions, term history) stays on the SDK.
 *
 * What the adapters read from the SDK is kept: a failure with an HTTP status is a RestError
 * carrying the status and the service's error code (table-errors.ts maps 404, 409 and 412
 * from them), Int64 is written as a string annotated `Edm.Int64` and read back as a number,
 * ETags come from the service, the call's AbortSignal ends it (and its retries) with an
 * AbortError, and transient failures are retried as the SDK's policy did (TABLE_RETRY).
 */
export interface TableRowClient {
  /** The row, or a RestError (404 `ResourceNotFound` when it is missing). */
  getEntity(partitionKey: string, rowKey: string, options?: StoreCallOptions): Promise<StoredRow>;
  /** An If-Match Merge or Replace; answers the new ETag. */
  updateEntity(row: TableRow, mode: "Merge" | "Replace", etag: string, options?: StoreCallOptions): Promise<{ readonly etag?: string | undefined }>;
  /** An unconditional Insert-or-Replace. */
  upsertEntity(row: TableRow, options?: StoreCallOptions): Promise<void>;
  /** Every row the filter selects (all of the table without one), every page followed. */
  queryEntities(filter: string | undefined, options?: StoreCallOptions): Promise<StoredRow[]>;
}

/** A row's key and the properties a write names (Int64 as `{value, type: "Int64"}`). */
export type TableRow = Record<string, unknown> & { partitionKey: string; rowKey: string };

/** A row as read: keys, ETag, and its properties (Int64 as numbers). */
export type StoredRow = Record<string, unknown> & { partitionKey: string; rowKey: string; etag: string };

/**
 * At most two retries, 50 ms growing to at most 400 ms apart (as the SDK client was
 * configured): a heartbeat answered after T − I is worthless to its caller, and the call's
 * AbortSignal cuts retries off at the store time budget.
 */
export const TABLE_RETRY = { maxRetries: 2, retryDelayInMs: 50, maxRetryDelayInMs: 400 } as const;

/** The oldest version with JSON and the `odata=…metadata` formats. */
const TABLE_VERSION = "2019-02-02";
const STORAGE_SCOPE = "https://storage.azure.com/.default";
/** A token is fetched again this long before it expires (the SDK's bearer policy waits as long). */
const TOKEN_REFRESH_MARGIN_MS = 2 * 60_000;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
/** Azurite's well-known account, as `UseDevelopmentStorage=true` means it. */
const DEVELOPMENT_ACCOUNT = {
  endpoint: "http://127.0.0.1:10002/devstoreaccount1",
  account: "devstoreaccount1",
  key: "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
};

/** How requests are authorized: SharedKeyLite with the account key, or a bearer token. */
export type TableAuth = { readonly kind: "shared-key"; readonly account: string; readonly key: string } | { readonly kind: "bearer"; readonly credential: TokenCredential };

/** The endpoint and key of a connection string; undefined for one that carries a SAS token instead of a key. */
export function sharedKeyFromConnectionString(connectionString: string): { endpoint: string; auth: TableAuth } | undefined {
  const parts = new Map<string, string>();
  for (const element of connectionString.split(";")) {
    const at = element.indexOf("=");
    if (at > 0) parts.set(element.slice(0, at).trim().toLowerCase(), element.slice(at + 1).trim());
  }
  if (parts.get("usedevelopmentstorage")?.toLowerCase() === "true") {
    return { endpoint: DEVELOPMENT_ACCOUNT.endpoint, auth: { kind: "shared-key", account: DEVELOPMENT_ACCOUNT.account, key: DEVELOPMENT_ACCOUNT.key } };
  }
  const account = parts.get("accountname");
  const key = parts.get("accountkey");
  if (!account || !key) return undefined;
  const suffix = parts.get("endpointsuffix");
  const endpoint = parts.get("tableendpoint") || (suffix ? `${parts.get("defaultendpointsprotocol") ?? "https"}://${account}.table.${suffix}` : undefined);
  if (endpoint === undefined) return undefined;
  return { endpoint, auth: { kind: "shared-key", account, key } };
}

/** One keep-alive agent per protocol, shared by the tables of one store; `close` ends their sockets. */
export class TableConnections {
  readonly #http = new HttpAgent({ keepAlive: true });
  readonly #https = new HttpsAgent({ keepAlive: true });

  agentFor(protocol: string): HttpAgent {
    return protocol === "https:" ? this.#https : this.#http;
  }

  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}

/** The Table REST API on node:http(s), for one table. */
export class TableRest implements TableRowClient {
  readonly #url: URL;
  readonly #basePath: string;
  readonly #authorize: (path: string, date: string, signal: AbortSignal | undefined) => Promise<string> | string;
  readonly #send: typeof httpRequest;
  readonly #agent: HttpAgent;

  constructor(endpoint: string, tableName: string, auth: TableAuth, connections: TableConnections) {
    this.#url = new URL(endpoint);
    this.#basePath = `${this.#url.pathname.replace(/\/+$/, "")}/${encodeURIComponent(tableName)}`;
    this.#send = this.#url.protocol === "https:" ? httpsRequest : httpRequest;
    this.#agent = connections.agentFor(this.#url.protocol);
    if (auth.kind === "shared-key") {
      const key = Buffer.from(auth.key, "base64");
      const account = auth.account;
      // SharedKeyLite for the Table service: the date and the canonical resource (the
      // account and the path as sent; no query parameter but `comp`, which these calls never use).
      this.#authorize = (path, date) => `SharedKeyLite ${account}:${createHmac("sha256", key).update(`${date}\n/${account}${path}`, "utf8").digest("base64")}`;
    } else {
      // HA_TABLE_ENDPOINT is https by configuration; a token is never sent in the clear
      // to anything but this machine (a stand-in server in tests), as the SDK refuses too.
      if (this.#url.protocol !== "https:" && !LOOPBACK.has(this.#url.hostname)) {
        throw new Error(`A bearer token is sent over https only: ${endpoint} is not an https endpoint.`);
      }
      const tokens = new BearerTokens(auth.credential);
      this.#authorize = (_path, _date, signal) => tokens.header(signal);
    }
  }

  async getEntity(partitionKey: string, rowKey: string, options?: StoreCallOptions): Promise<StoredRow> {
    const response = await this.#request("GET", this.#entityPath(partitionKey, rowKey), "", undefined, undefined, options?.abortSignal);
    if (response.status !== 200) throw failure(response);
    const row = fromWire(JSON.parse(response.body) as Record<string, unknown>);
    const etag = header(response.headers, "etag");
    if (etag !== undefined) row.etag = etag;
    return row;
  }

  async updateEntity(row: TableRow, mode: "Merge" | "Replace", etag: string, options?: StoreCallOptions): Promise<{ readonly etag?: string | undefined }> {
    const response = await this.#request(mode === "Merge" ? "MERGE" : "PUT", this.#entityPath(row.partitionKey, row.rowKey), "", toWire(row), etag, options?.abortSignal);
    if (response.status !== 204) throw failure(response);
    return { etag: header(response.headers, "etag") };
  }

  async upsertEntity(row: TableRow, options?: StoreCallOptions): Promise<void> {
    // A PUT without If-Match is Insert Or Replace.
    const response = await this.#request("PUT", this.#entityPath(row.partitionKey, row.rowKey), "", toWire(row), undefined, options?.abortSignal);
    if (response.status !== 204) throw failure(response);
  }

  async queryEntities(filter: string | undefined, options?: StoreCallOptions): Promise<StoredRow[]> {
    const rows: StoredRow[] = [];
    const path = `${this.#basePath}()`;
    let next: { partitionKey: string; rowKey: string | undefined } | undefined;
    do {
      const query = new URLSearchParams();
      if (filter !== undefined) query.set("$filter", filter);
      if (next !== undefined) {
        query.set("NextPartitionKey", next.partitionKey);
        if (next.rowKey !== undefined) query.set("NextRowKey", next.rowKey);
      }
      const encoded = query.toString().replace(/\+/g, "%20");
      const search = encoded === "" ? "" : `?${encoded}`;
      const response = await this.#request("GET", path, search, undefined, undefined, options?.abortSignal);
      if (response.status !== 200) throw failure(response);
      const page = JSON.parse(response.body) as { value?: Record<string, unknown>[] };
      for (const entity of page.value ?? []) rows.push(fromWire(entity));
      const partitionKey = header(response.headers, "x-ms-continuation-nextpartitionkey");
      next = partitionKey === undefined ? undefined : { partitionKey, rowKey: header(response.headers, "x-ms-continuation-nextrowkey") };
    } while (next !== undefined);
    return rows;
  }

  /** `/table(PartitionKey='…',RowKey='…')`: quotes doubled, then percent-encoded. */
  #entityPath(partitionKey: string, rowKey: string): string {
    return `${this.#basePath}(PartitionKey='${encodeURIComponent(partitionKey.replace(/'/g, "''"))}',RowKey='${encodeURIComponent(rowKey.replace(/'/g, "''"))}')`;
  }

  /** One call with its retries: transient answers and network errors are tried again, never past the signal. */
  async #request(method: string, path: string, search: string, body: string | undefined, ifMatch: string | undefined, signal: AbortSignal | undefined): Promise<WireResponse> {
    for (let retry = 0; ; retry += 1) {
      if (signal?.aborted) throw abortError();
      // Signed per attempt (the date moves on); a credential that fails is not retried here.
      const date = new Date().toUTCString();
      const authorization = await this.#authorize(path, date, signal);
      let response: WireResponse;
      try {
        response = await this.#once(method, `${path}${search}`, date, authorization, body, ifMatch, signal);
      } catch (error) {
        if (signal?.aborted) throw abortError();
        if (retry >= TABLE_RETRY.maxRetries) throw error;
        await backOff(retry, signal);
        continue;
      }
      if (retry >= TABLE_RETRY.maxRetries || !isTransient(response.status)) return response;
      await backOff(retry, signal);
    }
  }

  #once(method: string, path: string, date: string, authorization: string, body: string | undefined, ifMatch: string | undefined, signal: AbortSignal | undefined): Promise<WireResponse> {
    const headers: Record<string, string | number> = {
      "x-ms-date": date,
      "x-ms-version": TABLE_VERSION,
      DataServiceVersion: "3.0",
      MaxDataServiceVersion: "3.0;NetFx",
      Accept: "application/json;odata=minimalmetadata",
      Authorization: authorization,
    };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = Buffer.byteLength(body);
    }
    if (ifMatch !== undefined) headers["If-Match"] = ifMatch;
    return new Promise<WireResponse>((resolve, reject) => {
      const request = this.#send(
        { protocol: this.#url.protocol, hostname: this.#url.hostname, port: this.#url.port, method, path, headers, agent: this.#agent, signal },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("aborted", () => reject(signal?.aborted ? abortError() : new Error("The Table service closed the connection mid-answer.")));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }));
        },
      );
      request.on("error", (error) => reject(signal?.aborted ? abortError() : error));
      request.end(body);
    });
  }
}

/** The SDK's calls behind the same interface: for a connection string that carries a SAS token rather than a key. */
export function sdkRows(client: TableClient): TableRowClient {
  return {
    getEntity: async (partitionKey, rowKey, options) => {
      const entity = await client.getEntity<Record<string, unknown>>(partitionKey, rowKey, { abortSignal: options?.abortSignal });
      return { ...entity, partitionKey, rowKey, etag: entity.etag };
    },
    updateEntity: (row, mode, etag, options) => client.updateEntity(row, mode, { etag, abortSignal: options?.abortSignal }),
    upsertEntity: async (row, options) => void (await client.upsertEntity(row, "Replace", { abortSignal: options?.abortSignal })),
    queryEntities: async (filter, options) => {
      const rows: StoredRow[] = [];
      const entities = client.listEntities<Record<string, unknown>>({ ...(filter === undefined ? {} : { queryOptions: { filter } }), abortSignal: options?.abortSignal });
      for await (const entity of entities) rows.push({ ...entity, partitionKey: entity.partitionKey ?? "", rowKey: entity.rowKey ?? "", etag: entity.etag });
      return rows;
    },
  };
}

interface WireResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Bearer tokens for storage, one at a time, kept until shortly before they expire. */
class BearerTokens {
  #token: AccessToken | undefined;
  #pending: Promise<AccessToken> | undefined;

  constructor(private readonly credential: TokenCredential) {}

  async header(signal: AbortSignal | undefined): Promise<string> {
    const token = this.#token;
    if (token !== undefined && token.expiresOnTimestamp - TOKEN_REFRESH_MARGIN_MS > Date.now()) return `Bearer ${token.token}`;
    this.#pending ??= this.#fetch(signal).finally(() => (this.#pending = undefined));
    return `Bearer ${(await this.#pending).token}`;
  }

  async #fetch(signal: AbortSignal | undefined): Promise<AccessToken> {
    const token = await this.credential.getToken(STORAGE_SCOPE, { abortSignal: signal });
    if (token === null) throw new Error(`The credential gave no token for ${STORAGE_SCOPE}.`);
    this.#token = token;
    return token;
  }
}

/** 408, and 5xx except 501 Not Implemented and 505 (what the SDK's exponential policy retries), and 429 Too Many Requests. */
function isTransient(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

/** The SDK's exponential backoff: the capped delay's upper half, at random; ends early with an AbortError. */
function backOff(retry: number, signal: AbortSignal | undefined): Promise<void> {
  const capped = Math.min(TABLE_RETRY.maxRetryDelayInMs, TABLE_RETRY.retryDelayInMs * 2 ** retry);
  const delay = Math.round(capped / 2 + Math.random() * (capped / 2));
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, delay);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** What the SDK throws when its signal fires (describeFailure reads it as "timed out"). */
function abortError(): Error {
  const error = new Error("The operation was aborted.");
  error.name = "AbortError";
  return error;
}

/** A failed call as the SDK reports it: a RestError with the status and the service's error code. */
function failure(response: WireResponse): RestError {
  let code: string | undefined;
  let message = `The Table service answered HTTP ${response.status}.`;
  try {
    const odataError = (JSON.parse(response.body) as { "odata.error"?: { code?: unknown; message?: { value?: unknown } } })["odata.error"];
    if (typeof odataError?.code === "string") code = odataError.code;
    if (typeof odataError?.message?.value === "string") message = odataError.message.value;
  } catch {
    // No JSON body (a proxy's answer, a HEAD-like 204): the status and the header's code stand.
  }
  code ??= header(response.headers, "x-ms-error-code");
  const error = new RestError(message, { statusCode: response.status, ...(code === undefined ? {} : { code }) });
  error.details = { errorCode: code };
  return error;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Keys renamed, `{value, type}` written as the value and its `@odata.type`. */
function toWire(row: TableRow): string {
  const wire: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    const key = name === "partitionKey" ? "PartitionKey" : name === "rowKey" ? "RowKey" : name;
    if (typeof value === "object" && value !== null && "value" in value && "type" in value) {
      wire[key] = value.value;
      wire[`${key}@odata.type`] = `Edm.${String(value.type)}`;
    } else {
      wire[key] = value;
    }
  }
  return JSON.stringify(wire);
}

/** Keys renamed, annotations dropped, Int64 as a number (the SDK's bigint, made a number by the adapters). */
function fromWire(entity: Record<string, unknown>): StoredRow {
  const row: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(entity)) {
    if (name.includes("@odata.") || name === "odata.metadata") continue;
    const key = name === "PartitionKey" ? "partitionKey" : name === "RowKey" ? "rowKey" : name === "odata.etag" ? "etag" : name === "Timestamp" ? "timestamp" : name;
    row[key] = entity[`${name}@odata.type`] === "Edm.Int64" && typeof value === "string" ? Number(value) : value;
  }
  return row as StoredRow;
}
