import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { head, rawExchange, type RawExchange, type RawResponse } from "../helpers/raw-http.js";
import { startTestHost, type TestHost } from "../helpers/local-host.js";

/**
 * What a black-box fuzzer found the local host answering with a 500, a bare status line
 * or a dropped connection. Each answer must be the contract's JSON error (docs/api.md).
 */

let test: TestHost;
beforeAll(async () => {
  test = await startTestHost();
});
afterAll(async () => {
  await test.close();
});

async function send(raw: string | Buffer): Promise<RawExchange> {
  return rawExchange(test.port, [raw], { timeoutMs: 10_000 });
}

function expectJsonError(exchange: RawExchange, status: number, code: string, message?: RegExp): RawResponse {
  expect(exchange.timedOut, "the host answered in time").toBe(false);
  const [response] = exchange.responses;
  expect(response?.status, response?.body).toBe(status);
  expect(response?.headers["content-type"]).toMatch(/^application\/json/);
  const body = JSON.parse(response?.body ?? "") as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  if (message !== undefined) expect(body.error.message).toMatch(message);
  expect(body.error.message).not.toMatch(/at .*\.[jt]s:\d+/);
  return response as RawResponse;
}

const get = (target: string, extra: string[] = []): string => head(`GET ${target} HTTP/1.1`, ["Host: 127.0.0.1", ...extra]);

describe("methods", () => {
  // HEAD and OPTIONS are answered 404 as in Azure: azure-host-parity.test.ts.
  it.each(["TRACE", "PROPFIND", "PURGE", "POST"])("%s on a known route is 405 MethodNotAllowed with Allow", async (method) => {
    const response = expectJsonError(
      await send(head(`${method} /api/primary/scheduler HTTP/1.1`, ["Host: 127.0.0.1"])),
      405,
      "MethodNotAllowed",
      new RegExp(`${method} is not allowed`),
    );
    expect(response.headers["allow"]).toBe("GET, PUT, DELETE");
  });

  it("TRACE on an unknown route is 404 NotFound", async () => {
    expectJsonError(await send(head("TRACE /api/nothing HTTP/1.1", ["Host: 127.0.0.1"])), 404, "NotFound");
  });

  it("CONNECT gets a JSON 405 instead of a dropped connection", async () => {
    const response = expectJsonError(await send(head("CONNECT example.com:443 HTTP/1.1", ["Host: example.com:443"])), 405, "MethodNotAllowed", /not a proxy/);
    expect(response.headers["allow"]).toBe("GET, PUT, DELETE, POST");
  });
});

describe("request targets", () => {
  it("routes an absolute-form target by its path, whatever its authority", async () => {
    const exchange = await send(get("http://elsewhere.example/api/primary/scheduler"));
    expect(exchange.responses[0]?.status).toBe(200);
    expect(JSON.parse(exchange.responses[0]?.body ?? "")).toMatchObject({ utype: "scheduler", primary: null });
  });

  it.each([
    ["http://user:pw@host/api/primary/x", /credentials/],
    ["http://[/api/primary/x", /valid http or https URL/],
    ["ftp://host/api/primary/x", /valid http or https URL/],
    ["*", /path under \/api/],
  ])("answers the target %s with 400 InvalidRequest naming the request target", async (target, message) => {
    const response = expectJsonError(await send(get(target)), 400, "InvalidRequest", message);
    expect(response.body).toMatch(/request target/);
  });

  it.each(["//[", "//api/primary/x", "/api//primary/x", "/api/primary/x/y"])("answers the path %s with 404 NotFound", async (target) => {
    expectJsonError(await send(get(target)), 404, "NotFound");
  });
});

describe("requests Node's parser refuses", () => {
  it.each([
    ["a lowercase method", head("get /api/primary/x HTTP/1.1", ["Host: 127.0.0.1"])],
    ["a method Node does not know (TRACK)", head("TRACK /api/primary/x HTTP/1.1", ["Host: 127.0.0.1"])],
    ["a target that is no path", head("GET api/primary/x HTTP/1.1", ["Host: 127.0.0.1"])],
    ["a raw tab in the path", head("GET /api/primary/x\ty HTTP/1.1", ["Host: 127.0.0.1"])],
    ["a raw space in the path", head("GET /api/primary/x y HTTP/1.1", ["Host: 127.0.0.1"])],
    ["raw UTF-8 in the path", Buffer.from(head("GET /api/primary/é HTTP/1.1", ["Host: 127.0.0.1"]), "utf8")],
    ["Content-Length with Transfer-Encoding", head("PUT /api/primary/x HTTP/1.1", ["Host: 127.0.0.1", "Content-Length: 12", "Transfer-Encoding: chunked"]) + "0\r\n\r\n"],
    ["a header without a colon", head("GET /api/primary/x HTTP/1.1", ["Host: 127.0.0.1", "no colon here"])],
    ["binary junk", Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a])],
  ])("answers %s with a JSON 400 InvalidRequest", async (_name, raw) => {
    expectJsonError(await send(raw), 400, "InvalidRequest", /not valid HTTP\/1\.1/);
  });

  it("answers a 20 KB header with a JSON 431 HeadersTooLarge", async () => {
    expectJsonError(await send(get("/api/primary/x", [`x-big: ${"a".repeat(20_000)}`])), 431, "HeadersTooLarge", /headers are over/);
  });

  it("answers HTTP/1.1 without Host with a JSON 400", async () => {
    expectJsonError(await send(head("GET /api/primary/x HTTP/1.1", [])), 400, "InvalidRequest", /Host header/);
  });

  it("ignores an Expect it does not know instead of a bodiless 417", async () => {
    const body = '{"uuid":"expecting"}';
    const exchange = await send(
      head("PUT /api/primary/expect HTTP/1.1", ["Host: 127.0.0.1", "Expect: something-else", `Content-Length: ${body.length}`]) + body,
    );
    expect(exchange.responses[0]?.status).toBe(200);
  });

  it("answers a valid request and then a garbage one pipelined behind it on the same connection", async () => {
    const exchange = await rawExchange(test.port, [get("/api/primary/x") + "GARBAGE\r\n\r\n"], { timeoutMs: 10_000, responses: 2 });
    expect(exchange.responses.map((response) => response.status)).toEqual([200, 400]);
    expect(JSON.parse(exchange.responses[1]?.body ?? "")).toMatchObject({ error: { code: "InvalidRequest" } });
  });
});

describe("bodies", () => {
  const put = (utype: string, body: string, extra: string[]): string =>
    head(`PUT /api/primary/${utype} HTTP/1.1`, ["Host: 127.0.0.1", `Content-Length: ${Buffer.byteLength(body)}`, ...extra]) + body;

  it.each(["gzip", "br", "deflate", "identity, gzip", "x-unknown"])(
    "refuses a body with Content-Encoding %s with 415 UnsupportedMediaType, and writes nothing",
    async (coding) => {
      const utype = `coded-${coding.replace(/[^a-z]/g, "")}`;
      expectJsonError(await send(put(utype, '{"uuid":"a"}', [`Content-Encoding: ${coding}`])), 415, "UnsupportedMediaType", /Content-Encoding/);
      const after = await send(get(`/api/primary/${utype}`));
      expect(JSON.parse(after.responses[0]?.body ?? "")).toMatchObject({ primary: null });
    },
  );

  it("refuses a transfer coding other than chunked with 415", async () => {
    const body = '{"uuid":"a"}';
    const raw =
      head("PUT /api/primary/te HTTP/1.1", ["Host: 127.0.0.1", "Transfer-Encoding: gzip, chunked"]) + `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    expectJsonError(await send(raw), 415, "UnsupportedMediaType", /Transfer-Encoding "gzip"/);
  });

  it("accepts Content-Encoding identity, and a JSON body whatever its Content-Type says (as Azure does)", async () => {
    for (const [index, extra] of [["Content-Encoding: identity"], ["Content-Type: text/plain"], []].entries()) {
      const exchange = await send(put(`lenient-${index}`, '{"uuid":"a"}', extra));
      expect(exchange.responses[0]?.status, exchange.responses[0]?.body).toBe(200);
    }
  });

  it("reads the body as UTF-8 whatever charset its Content-Type names", async () => {
    const utf16 = Buffer.from('{"uuid":"wide"}', "utf16le");
    const raw = Buffer.concat([
      Buffer.from(head("PUT /api/primary/wide HTTP/1.1", ["Host: 127.0.0.1", "Content-Type: application/json; charset=utf-16le", `Content-Length: ${utf16.byteLength}`])),
      utf16,
    ]);
    expectJsonError(await send(raw), 400, "InvalidRequest", /JSON object/);
  });
});

describe("the last resort", () => {
  it("answers an unexpected error with a 500 InternalError without detail, and logs it with its stack", async () => {
    const broken = await startTestHost({
      runtime: () => Promise.reject(new Error("secret detail from the depths")),
    });
    try {
      const exchange = await rawExchange(broken.port, [get("/api/primary/x")], { timeoutMs: 10_000 });
      const response = exchange.responses[0];
      expect(response?.status).toBe(500);
      expect(JSON.parse(response?.body ?? "")).toEqual({ error: { code: "InternalError", message: "The server failed; see its log." } });
      expect(broken.logs.join("\n")).toMatch(/secret detail from the depths[\s\S]*at /);
    } finally {
      await broken.close();
    }
  });
});
