import { ErrorResponse, type OperationResponse, type Response } from "@azure/cosmos";
import { RestError } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { batchOutcome, conditionalCosmosWrite, OWNER_RESOURCE_NOT_FOUND } from "../../shared/store/cosmos-errors.js";
import { conditionalTableWrite, type ConditionalWriteKind } from "../../shared/store/table-values.js";

/**
 * The one mapping both Table adapters (leases and members) and both Cosmos adapters use
 * from a conditional write's answer to its outcome (docs/stores.md): a lost race is a typed
 * outcome the service decides on, anything else the store being unavailable (a 503).
 */

function tableError(statusCode: number, code?: string): RestError {
  return new RestError(`HTTP ${statusCode}${code === undefined ? "" : ` ${code}`}`, { statusCode, ...(code === undefined ? {} : { code }) });
}

function cosmosError(code: number, substatus?: number): ErrorResponse {
  return Object.assign(new ErrorResponse(`HTTP ${code}`), { code }, substatus === undefined ? {} : { substatus });
}

const failing = (error: unknown) => (): Promise<never> => Promise.reject(error);

describe("conditionalTableWrite", () => {
  const write = (kind: ConditionalWriteKind, answer: () => Promise<{ etag?: string }>) => conditionalTableWrite("Azure Table Storage", "update a row", kind, answer);

  it.each([
    { kind: "update", error: tableError(412, "UpdateConditionNotSatisfied"), outcome: { ok: false, reason: "changed" } },
    { kind: "update", error: tableError(404, "ResourceNotFound"), outcome: { ok: false, reason: "missing" } },
    { kind: "create", error: tableError(409, "EntityAlreadyExists"), outcome: { ok: false, reason: "exists" } },
  ] as const)("maps $error.statusCode on a $kind to $outcome.reason", async ({ kind, error, outcome }) => {
    await expect(write(kind, failing(error))).resolves.toEqual(outcome);
  });

  it.each([
    { kind: "update", error: tableError(404, "TableNotFound"), message: /HTTP 404 TableNotFound/ },
    { kind: "update", error: tableError(409, "EntityAlreadyExists"), message: /HTTP 409/ },
    { kind: "create", error: tableError(412, "UpdateConditionNotSatisfied"), message: /HTTP 412/ },
    { kind: "create", error: tableError(404, "ResourceNotFound"), message: /HTTP 404/ },
    { kind: "update", error: tableError(503, "ServerBusy"), message: /HTTP 503 ServerBusy/ },
    { kind: "update", error: new Error("connect ECONNREFUSED"), message: /ECONNREFUSED/ },
  ] as const)("reports $message on a $kind as the store being unavailable", async ({ kind, error, message }) => {
    const answer = write(kind, failing(error));
    await expect(answer).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(answer).rejects.toThrow(message);
    await expect(answer).rejects.toThrow(/^Could not update a row in Azure Table Storage/);
  });

  it("answers the write's new ETag, and refuses a write answered without one", async () => {
    await expect(write("update", async () => ({ etag: 'W/"2"' }))).resolves.toEqual({ ok: true, etag: 'W/"2"' });
    await expect(write("create", async () => ({}))).rejects.toThrow(/without an ETag/);
  });
});

describe("conditionalCosmosWrite", () => {
  const write = (kind: ConditionalWriteKind, answer: () => Promise<{ etag?: string }>) => conditionalCosmosWrite("Cosmos DB", kind, answer);

  it.each([
    { kind: "update", error: cosmosError(412), outcome: { ok: false, reason: "changed" } },
    { kind: "update", error: cosmosError(404), outcome: { ok: false, reason: "missing" } },
    { kind: "create", error: cosmosError(409), outcome: { ok: false, reason: "exists" } },
  ] as const)("maps $error.code on a $kind to $outcome.reason", async ({ kind, error, outcome }) => {
    await expect(write(kind, failing(error))).resolves.toEqual(outcome);
  });

  it.each([
    { kind: "update", error: cosmosError(404, OWNER_RESOURCE_NOT_FOUND) },
    { kind: "create", error: cosmosError(412) },
    { kind: "update", error: cosmosError(429) },
    { kind: "update", error: cosmosError(503) },
  ] as const)("passes $error.code/$error.substatus on a $kind on, for the caller to wait out or report", async ({ kind, error }) => {
    await expect(write(kind, failing(error))).rejects.toBe(error);
  });

  it("answers the write's new ETag", async () => {
    await expect(write("update", async () => ({ etag: '"3"' }))).resolves.toEqual({ ok: true, etag: '"3"' });
  });
});

describe("a Cosmos transactional batch's answer, as one conditional write's", () => {
  const answer = (code: number, ...statuses: number[]): Response<OperationResponse[]> => ({
    headers: {},
    code,
    result: statuses.map((statusCode, index) => ({ statusCode, requestCharge: 1, ...(statusCode < 300 ? { eTag: `"etag-${index}"` } : {}) })),
  });
  const outcomeOf = (response: Response<OperationResponse[]>) => conditionalCosmosWrite("Cosmos DB", "update", async () => batchOutcome(response));

  it("answers the first operation's (the entry's) ETag when every operation succeeded", async () => {
    await expect(outcomeOf(answer(200, 200, 200))).resolves.toEqual({ ok: true, etag: '"etag-0"' });
  });

  // Cosmos DB answers a failed batch with the failing operation's own status and 424 for the
  // others, whatever the HTTP status of the whole (207 from the service, 200 from the emulator).
  it.each([
    { code: 207, statuses: [412, 424], outcome: { ok: false, reason: "changed" } },
    { code: 200, statuses: [412, 424], outcome: { ok: false, reason: "changed" } },
    { code: 207, statuses: [404, 424], outcome: { ok: false, reason: "missing" } },
  ] as const)("maps a batch answered $code with $statuses to $outcome.reason", async ({ code, statuses, outcome }) => {
    await expect(outcomeOf(answer(code, ...statuses))).resolves.toEqual(outcome);
  });

  it.each([
    { code: 207, statuses: [424, 400], status: 400 },
    { code: 207, statuses: [424, 429], status: 429 },
    { code: 207, statuses: [424, 424], status: 207 },
    { code: 200, statuses: [], status: 200 },
  ])("throws a batch answered $code with $statuses as HTTP $status, for the caller to wait out or report", async ({ code, statuses, status }) => {
    await expect(outcomeOf(answer(code, ...statuses))).rejects.toMatchObject({ code: status });
  });
});
