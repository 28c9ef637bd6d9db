import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { HttpResponseInit } from "../../shared/http/azure-functions.js";
import { writeResponse } from "../../shared/host/serve-request.js";

/** What writeResponse does to a ServerResponse: headers in the order set, status, payload. */
function written(result: HttpResponseInit): { status: number; headers: [string, string][]; payload: string } {
  const headers: [string, string][] = [];
  let payload = "";
  const response = {
    statusCode: 0,
    setHeader(name: string, value: string) {
      headers.push([name, value]);
      return response;
    },
    end(body: string | Uint8Array) {
      payload = typeof body === "string" ? body : Buffer.from(body).toString();
    },
  };
  writeResponse(response as unknown as ServerResponse, result);
  return { status: response.statusCode, headers, payload };
}

/** The answer's headers as a Fetch Headers gives them, which is what the host wrote before it read plain objects itself. */
function viaFetchHeaders(init: HttpResponseInit["headers"], json: boolean): [string, string][] {
  const headers = new Headers(init as ConstructorParameters<typeof Headers>[0]);
  if (json) headers.set("content-type", "application/json; charset=utf-8");
  const list: [string, string][] = [];
  headers.forEach((value, name) => list.push([name, value]));
  return list;
}

describe("writeResponse writes a handler's headers as a Fetch Headers holds them", () => {
  const cases: [string, HttpResponseInit][] = [
    ["a JSON answer", { status: 200, jsonBody: { utype: "a" }, headers: { "cache-control": "no-store" } }],
    ["a 405 with Allow", { status: 405, jsonBody: { error: {} }, headers: { "cache-control": "no-store", allow: "GET, PUT" } }],
    ["mixed case, padding and a name given twice", { status: 503, jsonBody: {}, headers: { "Retry-After": " 1 ", "X-Twice": "a", "x-twice": "b", "Content-Type": "text/plain" } }],
    ["a text body", { status: 200, body: "<!doctype html>", headers: { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": "default-src 'self'" } }],
    ["a Headers object", { status: 200, body: "x", headers: new Headers({ "X-B": "2", "x-a": "1" }) }],
    ["a list of pairs", { status: 200, body: "x", headers: [["X-B", "2"], ["x-a", "1"], ["X-A", "3"]] }],
    ["no headers", { status: 204 }],
  ];
  for (const [name, result] of cases) {
    it(`for ${name}`, () => {
      const out = written(result);
      expect(out.headers).toEqual(viaFetchHeaders(result.headers, result.jsonBody !== undefined));
      expect(out.status).toBe(result.status);
    });
  }

  it("serializes jsonBody once, as the payload", () => {
    expect(written({ status: 200, jsonBody: { a: [1, "b"] } }).payload).toBe('{"a":[1,"b"]}');
  });
});
