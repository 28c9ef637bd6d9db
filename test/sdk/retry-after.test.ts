import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HaClient, parseRetryAfter } from "../../shared/sdk/transport/ha-client.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";

describe("HaClient reads Retry-After, so the elector can honour it", () => {
  let server: Server;
  let client: HaClient;
  let retryAfter: string | undefined;
  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (retryAfter !== undefined) headers["retry-after"] = retryAfter;
      response.writeHead(503, headers).end(JSON.stringify({ error: { code: "Overloaded", message: "at capacity" } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    client = new HaClient({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api` });
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );

  it("a 503 Overloaded with Retry-After: 3 is a retryable HaRequestError with retryAfterMs 3000", async () => {
    retryAfter = "3";
    const error = await client.getPrimary("scheduler").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HaRequestError);
    expect(error).toMatchObject({ code: "Overloaded", status: 503, retryable: true, retryAfterMs: 3000 });
  });

  it("without Retry-After, retryAfterMs is undefined", async () => {
    retryAfter = undefined;
    await expect(client.heartbeat("scheduler", { uuid: "a" })).rejects.toMatchObject({ code: "Overloaded", retryAfterMs: undefined });
  });

  it.each([
    ["0", 0],
    [" 12 ", 12_000],
    ["99999999", 3_600_000],
    ["Wed, 21 Oct 2015 07:28:00 GMT", undefined],
    ["-1", undefined],
    ["1.5", undefined],
    [null, undefined],
  ])("Retry-After %o reads as %o ms (seconds only, capped at an hour)", (value, expected) => {
    expect(parseRetryAfter(value)).toBe(expected);
  });
});
