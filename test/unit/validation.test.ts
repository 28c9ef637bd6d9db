import { describe, expect, it } from "vitest";
import { HttpError } from "../../shared/http/http-error.js";
import { MAX_BODY_BYTES, parseHeartbeatBody, parseId } from "../../shared/http/validation.js";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function refusal(run: () => unknown): HttpError {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error("expected an HttpError");
}

describe("utype and uuid", () => {
  it.each(["a", "scheduler", "broker.v2:eu-1_a", "x".repeat(128), "550e8400-e29b-41d4-a716-446655440000"])("accepts %s", (id) => {
    expect(parseId("utype", id)).toBe(id);
  });

  it.each(["", "x".repeat(129), "has space", "slash/", "back\\slash", "hash#", "q?", "ünï", "tab\t", 42, undefined, null])(
    "refuses %j, naming the field",
    (id) => {
      const error = refusal(() => parseId("uuid", id));
      expect(error.status).toBe(400);
      expect(error.code).toBe("InvalidRequest");
      expect(error.message).toMatch(/^uuid /);
    },
  );
});

describe("heartbeat body", () => {
  it("parses uuid, address and lease", () => {
    expect(parseHeartbeatBody(bytes('{"uuid":"a","address":"10.0.0.4:5800","lease":"t"}'))).toEqual({
      uuid: "a",
      address: "10.0.0.4:5800",
      lease: "t",
    });
  });

  it("treats absent, null and empty address as null, and absent or null lease as absent", () => {
    expect(parseHeartbeatBody(bytes('{"uuid":"a"}'))).toEqual({ uuid: "a", address: null, lease: undefined });
    expect(parseHeartbeatBody(bytes('{"uuid":"a","address":null,"lease":null}'))).toEqual({ uuid: "a", address: null, lease: undefined });
    expect(parseHeartbeatBody(bytes('{"uuid":"a","address":""}')).address).toBeNull();
  });

  it.each([
    ["", /JSON object/],
    ["{", /JSON object/],
    ["null", /JSON object/],
    ['"text"', /JSON object/],
    ["[]", /JSON object/],
    ['{"uuid":"a","utype":"b"}', /Unknown field "utype"/],
    ['{"address":"x"}', /^uuid is required/],
    ['{"uuid":"a","address":7}', /^address must be a string/],
    [`{"uuid":"a","address":"${"x".repeat(513)}"}`, /^address must be at most 512/],
    ['{"uuid":"a","address":"line\\nbreak"}', /^address must not contain control/],
    ['{"uuid":"a","lease":{}}', /^lease must be/],
  ])("refuses %s with 400", (text, message) => {
    const error = refusal(() => parseHeartbeatBody(bytes(text)));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(message);
  });

  it("refuses invalid UTF-8 as a non-JSON body", () => {
    expect(refusal(() => parseHeartbeatBody(new Uint8Array([0x7b, 0xff, 0x7d]))).status).toBe(400);
  });

  it("refuses a body over 4 KiB with 413, and accepts one of exactly 4 KiB", () => {
    const padding = (size: number): string => `{"uuid":"a","address":"${"x".repeat(size - 25)}"}`;
    expect(bytes(padding(MAX_BODY_BYTES)).byteLength).toBe(MAX_BODY_BYTES);
    expect(refusal(() => parseHeartbeatBody(bytes(padding(MAX_BODY_BYTES + 1)))).status).toBe(413);
    // Exactly 4 KiB passes the size check and is then judged on its fields (address too long).
    expect(refusal(() => parseHeartbeatBody(bytes(padding(MAX_BODY_BYTES)))).status).toBe(400);
  });
});
