import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpRequest } from "../../shared/http/azure-functions.js";
import { LocalRequest } from "../../shared/host/local-request.js";

/**
 * The local host hands handlers a LocalRequest where Azure hands them an HttpRequest: for
 * the same message both must show the same method, URL, query, headers and body, or the
 * two hosts could answer differently. Compared here on real node:http messages.
 */
interface Seen {
  message: IncomingMessage;
  bytes: Uint8Array;
}

let server: ReturnType<typeof createServer>;
let port = 0;
let seen: Seen | undefined;

beforeAll(async () => {
  server = createServer((message, response) => {
    const chunks: Buffer[] = [];
    message.on("data", (chunk: Buffer) => chunks.push(chunk));
    message.on("end", () => {
      seen = { message, bytes: Buffer.concat(chunks) };
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function receive(method: string, path: string, headers: [string, string][], body?: string): Promise<Seen> {
  seen = undefined;
  await new Promise<void>((resolve, reject) => {
    const outgoing = httpRequest({ host: "127.0.0.1", port, method, path, headers: [["Host", `127.0.0.1:${port}`], ...headers].flat() }, (response) => {
      response.resume();
      response.on("end", resolve);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
  return seen!;
}

/** The HttpRequest the local host used to build for the same message. */
function asFunctionsRequest({ message, bytes }: Seen, url: URL, params: Record<string, string>): HttpRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return new HttpRequest({ method: message.method!, url: url.toString(), headers, params, ...(bytes.byteLength > 0 ? { body: { bytes } } : {}) });
}

const NAMES = ["content-type", "Content-Type", "content-length", "content-encoding", "x-functions-key", "x-twice", "set-cookie", "absent", "constructor", "toString"];

async function expectSame(method: string, path: string, headers: [string, string][], body?: string): Promise<void> {
  const received = await receive(method, path, headers, body);
  const url = new URL(`http://127.0.0.1:${port}${path}`);
  const params = { utype: "role-a" };
  const local = new LocalRequest(received.message, received.message.method!, url, params, received.bytes);
  const functions = asFunctionsRequest(received, url, params);
  expect(local.method).toBe(functions.method);
  expect(local.url).toBe(functions.url);
  expect([...local.query.entries()]).toEqual([...functions.query.entries()]);
  expect(local.params).toEqual(functions.params);
  for (const name of NAMES) expect(local.headers.get(name), name).toBe(functions.headers.get(name));
  expect(local.body === null).toBe(functions.body === null);
  expect(new Uint8Array(await local.arrayBuffer())).toEqual(new Uint8Array(await functions.arrayBuffer()));
}

describe("LocalRequest shows a handler what the Functions HttpRequest shows it", () => {
  it("for a PUT with a JSON body, a query and repeated headers", async () => {
    await expectSame(
      "PUT",
      "/api/primary/role-a?code=k&x=%20y&x=2",
      [
        ["Content-Type", "application/json"],
        ["X-Twice", "one"],
        ["x-twice", "two"],
        ["Set-Cookie", "a=1"],
        ["Set-Cookie", "b=2"],
      ],
      JSON.stringify({ uuid: "u-1", address: "10.0.0.4:5800", lease: "v2.x.y" }),
    );
  });

  it("for a PUT without a body", async () => {
    await expectSame("PUT", "/api/primary/role-a", [["content-length", "0"]]);
  });

  it("for a GET that carries a body, which the Fetch Request drops", async () => {
    await expectSame("GET", "/api/primary/role-a", [["content-type", "text/plain"], ["content-length", "7"]], "ignored");
  });

  it("for a DELETE with a body and a content coding", async () => {
    await expectSame("DELETE", "/api/primary/role-a?uuid=u-1", [["Content-Encoding", "identity"]], "{}");
  });

  it("gives a fresh ArrayBuffer holding only the body, not Node's shared pool", async () => {
    const received = await receive("PUT", "/api/primary/role-a", [], "abc");
    const pooled = Buffer.concat([Buffer.from("xx"), Buffer.from(received.bytes)]).subarray(2);
    const local = new LocalRequest(received.message, "PUT", new URL(`http://127.0.0.1:${port}/`), {}, pooled);
    const buffer = await local.arrayBuffer();
    expect(buffer.byteLength).toBe(3);
    expect(Buffer.from(buffer).toString()).toBe("abc");
  });
});
