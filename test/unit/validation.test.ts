import { describe, expect, it } from "vitest";
import { HttpError } from "../../shared/http/http-error.js";
import { MAX_BODY_BYTES } from "../../shared/contract/input-rules.js";
import { parseHeartbeatBody, parseId } from "../../shared/http/validation.js";

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

  it.each([".", ".."])("refuses %s, which passes the pattern but cannot be addressed in a URL path", (id) => {
    const error = refusal(() => parseId("utype", id));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^utype must not be "\." or "\.\."/);
  });

  it.each(["...", ".a", "a.", "a..b"])("accepts %s: only the two path segments are special", (id) => {
    expect(parseId("uuid", id)).toBe(id);
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

  it("keeps an omitted address apart from null (omitted keeps the stored one, null clears it); empty is null", () => {
    expect(parseHeartbeatBody(bytes('{"uuid":"a"}'))).toEqual({ uuid: "a", address: undefined, lease: undefined });
    expect(parseHeartbeatBody(bytes('{"uuid":"a","address":null,"lease":null}'))).toEqual({ uuid: "a", address: null, lease: undefined });
    expect(parseHeartbeatBody(bytes('{"uuid":"a","address":""}')).address).toBeNull();
  });

  it.each([["123", 123], ["an object", {}], ["an array", ["t"]], ["true", true], ["an absurdly long string", "t".repeat(3900)]])(
    "treats a lease that is %s as a malformed token: absent, not a 400",
    (_name, lease) => {
      expect(parseHeartbeatBody(bytes(JSON.stringify({ uuid: "a", lease }))).lease).toBeUndefined();
    },
  );

  it("takes a priority (an integer within the range; 0 is the default and left out) and preempt (docs/protocol.md#priorities-and-preemption)", () => {
    expect(parseHeartbeatBody(bytes('{"uuid":"a","priority":-1000000,"preempt":true,"announce":true}'))).toEqual({
      uuid: "a",
      address: undefined,
      lease: undefined,
      announce: true,
      priority: -1_000_000,
      preempt: true,
    });
    expect(parseHeartbeatBody(bytes('{"uuid":"a","priority":1000000}')).priority).toBe(1_000_000);
    // The defaults stated are the body of a caller that omits them.
    expect(parseHeartbeatBody(bytes('{"uuid":"a","priority":0,"preempt":false}'))).toEqual({ uuid: "a", address: undefined, lease: undefined });
  });

  it.each([
    ['"1"', "priority must be an integer from -1000000 to 1000000 (higher preferred; 0 when omitted) (got \"1\")."],
    ["1.5", "priority must be an integer from -1000000 to 1000000 (higher preferred; 0 when omitted) (got 1.5)."],
    ["1000001", "priority must be an integer from -1000000 to 1000000 (higher preferred; 0 when omitted) (got 1000001)."],
    ["null", "priority must be an integer from -1000000 to 1000000 (higher preferred; 0 when omitted) (got null)."],
  ])("refuses a priority of %s, naming the field", (value, message) => {
    expect(refusal(() => parseHeartbeatBody(bytes(`{"uuid":"a","priority":${value}}`))).message).toBe(message);
  });

  it("refuses a preempt that is not a boolean, naming the field", () => {
    expect(refusal(() => parseHeartbeatBody(bytes('{"uuid":"a","preempt":"yes"}'))).message).toBe("preempt must be true or false.");
  });

  it("counts the address in Unicode code points, not UTF-16 units", () => {
    const emoji = "\u{1F600}";
    expect(parseHeartbeatBody(bytes(JSON.stringify({ uuid: "a", address: emoji.repeat(300) }))).address).toBe(emoji.repeat(300));
    expect(parseHeartbeatBody(bytes(JSON.stringify({ uuid: "a", address: "é".repeat(512) }))).address).toHaveLength(512);
    const error = refusal(() => parseHeartbeatBody(bytes(JSON.stringify({ uuid: "a", address: emoji.repeat(513) }))));
    expect(error.message).toBe("address must be at most 512 characters (got 513).");
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
