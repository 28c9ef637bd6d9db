/**
 * What the Azure Functions host decides before a function runs, the local host decides the
 * same way (docs/deploy/background.md#what-the-host-decides):
 *  - literal route segments match in any case (ASP.NET Core routing): GET /api/HEALTH is health;
 *  - the host passes a body only when Content-Length is above 0, so a chunked body would be
 *    lost there: here it is refused with the cause ("send Content-Length");
 *  - HEAD and OPTIONS are bound to no function in Azure, so the host answers 404: here too.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import { head, rawExchange, type RawExchange } from "../helpers/raw-http.js";
import { startTestHost, type TestHost } from "../helpers/local-host.js";

let test: TestHost;
beforeAll(async () => {
  test = await startTestHost();
});
afterAll(async () => {
  await test.close();
});

async function exchange(request: string, options: { head?: boolean } = {}): Promise<RawExchange> {
  return rawExchange(test.port, [request], { timeoutMs: 10_000, responses: 1, ...options });
}

function bodyOf(found: RawExchange): { error?: { code?: string; message?: string }; status?: string; primary?: { uuid?: string } } {
  return JSON.parse(found.responses[0]?.body ?? "{}") as ReturnType<typeof bodyOf>;
}

const put = (path: string, framing: string[], body: string): string =>
  head(`PUT ${path} HTTP/1.1`, ["Host: 127.0.0.1", "Content-Type: application/json", ...framing]) + body;

describe("route matching, as the Functions host routes", () => {
  it("matches literal segments in any case, the prefix too: GET /api/HEALTH and /API/Health are health", async () => {
    for (const path of ["/api/HEALTH", "/API/Health", "/api/health"]) {
      const found = await exchange(head(`GET ${path} HTTP/1.1`, ["Host: 127.0.0.1"]));
      expect(found.responses[0]?.status, path).toBe(200);
      expect(bodyOf(found).status, path).toBe("ok");
    }
  });

  it("keeps a parameter's case: PUT /api/PRIMARY/Scheduler is the role Scheduler", async () => {
    const body = '{"uuid":"case-a"}';
    const accepted = await exchange(put("/api/PRIMARY/Scheduler", [`Content-Length: ${body.length}`], body));
    expect(accepted.responses[0]?.status).toBe(200);
    const read = await exchange(head("GET /api/primary/Scheduler HTTP/1.1", ["Host: 127.0.0.1"]));
    expect(bodyOf(read).primary?.uuid).toBe("case-a");
    const other = await exchange(head("GET /api/primary/scheduler HTTP/1.1", ["Host: 127.0.0.1"]));
    expect(bodyOf(other).primary).toBeNull();
  });
});

describe("a body without Content-Length", () => {
  it("refuses a chunked body with 400 naming the cause, and keeps nothing", async () => {
    const body = '{"uuid":"chunked"}';
    const found = await exchange(put("/api/primary/chunked", ["Transfer-Encoding: chunked"], `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`));
    expect(found.responses[0]?.status).toBe(400);
    expect(bodyOf(found).error).toMatchObject({ code: "InvalidRequest", message: expect.stringMatching(/send Content-Length/) });
    const read = await exchange(head("GET /api/primary/chunked HTTP/1.1", ["Host: 127.0.0.1"]));
    expect(bodyOf(read).primary).toBeNull();
  });

  it("takes the same body with Content-Length", async () => {
    const body = '{"uuid":"by-length"}';
    const found = await exchange(put("/api/primary/by-length", [`Content-Length: ${body.length}`], body));
    expect(found.responses[0]?.status).toBe(200);
  });

  it("is never what the SDK sends: its heartbeats and member heartbeats carry Content-Length, nothing goes chunked", async () => {
    const seen: Array<{ method: string; length: string | undefined; chunked: boolean }> = [];
    const recorder = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        seen.push({ method: request.method ?? "", length: request.headers["content-length"], chunked: request.headers["transfer-encoding"] !== undefined });
        response.writeHead(503, { "content-type": "application/json" }).end('{"error":{"code":"StoreUnavailable","message":"recorded"}}');
      });
    });
    await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
    try {
      const client = new HaClient({ endpoint: `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/api` });
      await Promise.allSettled([
        client.heartbeat("sdk", { uuid: "sdk-a" }),
        client.memberHeartbeat("g", "m", { session: "s" }),
        client.release("sdk", "sdk-a"),
      ]);
    } finally {
      await new Promise((resolve) => recorder.close(resolve));
    }
    const puts = seen.filter((request) => request.method === "PUT");
    expect(puts.length).toBeGreaterThanOrEqual(2);
    for (const request of puts) expect(request, "a PUT").toMatchObject({ chunked: false, length: expect.stringMatching(/^[1-9][0-9]*$/) });
    expect(seen.filter((request) => request.chunked)).toEqual([]);
  });

  it("serves a chunked request whose body is empty as one without a body, as the host does", async () => {
    const found = await exchange(head("GET /api/health HTTP/1.1", ["Host: 127.0.0.1", "Transfer-Encoding: chunked"]) + "0\r\n\r\n");
    expect(found.responses[0]?.status).toBe(200);
  });
});

describe("HEAD and OPTIONS, bound to no function in Azure", () => {
  it("answers HEAD on a route with 404 and no body, as the host does", async () => {
    const found = await exchange(head("HEAD /api/health HTTP/1.1", ["Host: 127.0.0.1"]), { head: true });
    expect(found.responses[0]?.status).toBe(404);
    expect(found.responses[0]?.body).toBe("");
  });

  it("answers OPTIONS on a route with 404 saying why", async () => {
    const found = await exchange(head("OPTIONS /api/primary/x HTTP/1.1", ["Host: 127.0.0.1"]));
    expect(found.responses[0]?.status).toBe(404);
    expect(bodyOf(found).error).toMatchObject({ code: "NotFound", message: expect.stringMatching(/OPTIONS .*CORS/) });
  });
});
