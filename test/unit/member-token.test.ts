import { describe, expect, it } from "vitest";
import { MAX_ID_LENGTH, MAX_MEMBER_TOKEN_LENGTH } from "../../shared/contract/input-rules.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import { MemberTokenSigner, type MemberTokenClaims } from "../../shared/members/member-token.js";

const SECRET = "a-test-secret-that-is-long-enough-for-hmac";
const claims: MemberTokenClaims = {
  group: "g",
  member: "node-1",
  session: "s1",
  heartbeats: 4,
  joinedAt: 1_000,
  renewedAt: 2_000,
  address: "10.0.0.4:5800",
  previous: { session: "s0", state: "unreachable", at: 900 },
  etag: 'W/"datetime\'2026-11-22T12%3A43%3A18.1234567Z\'"',
};
const caller = { group: "g", member: "node-1", session: "s1" };

describe("MemberTokenSigner: the member heartbeat's fast-path token", () => {
  it("round-trips every claim for its own caller", () => {
    const signer = new MemberTokenSigner(SECRET);
    expect(signer.verify(signer.issue(claims), caller)).toEqual(claims);
    expect(signer.verify(signer.issue({ ...claims, address: null, previous: null }), caller)).toEqual({ ...claims, address: null, previous: null });
  });

  it("is worthless to another caller: another session, member or group reads it as absent", () => {
    const signer = new MemberTokenSigner(SECRET);
    const token = signer.issue(claims);
    expect(signer.verify(token, { ...caller, session: "s2" })).toBeUndefined();
    expect(signer.verify(token, { ...caller, member: "node-2" })).toBeUndefined();
    expect(signer.verify(token, { ...caller, group: "h" })).toBeUndefined();
  });

  it("refuses a forged or altered token, another secret's, and a lease token", () => {
    const signer = new MemberTokenSigner(SECRET);
    const token = signer.issue(claims);
    const [version, payload, signature] = token.split(".");
    const altered = Buffer.from(JSON.stringify(["g", "node-1", "s1", 4, 1000, 2000, null, null, "*"])).toString("base64url");
    expect(signer.verify(`${version}.${altered}.${signature}`, caller)).toBeUndefined();
    expect(signer.verify(`${version}.${payload}.${signature}x`, caller)).toBeUndefined();
    expect(new MemberTokenSigner("another-secret-that-is-long-enough-too").verify(token, caller)).toBeUndefined();
    const lease = new LeaseTokenSigner(SECRET).issue({ utype: "g", uuid: "s1", epoch: 1, etag: "e", address: null });
    expect(signer.verify(lease, caller)).toBeUndefined();
    expect(signer.verify("", caller)).toBeUndefined();
    expect(signer.verify("x".repeat(MAX_MEMBER_TOKEN_LENGTH + 1), caller)).toBeUndefined();
  });

  it("is never longer than the limit the server accepts, even for the longest ids and address", () => {
    const id = "i".repeat(MAX_ID_LENGTH);
    const signer = new MemberTokenSigner(SECRET);
    const longest = signer.issue({
      ...claims,
      group: id,
      member: id,
      session: id,
      heartbeats: Number.MAX_SAFE_INTEGER,
      address: "😀".repeat(512),
      previous: { session: id, state: "unreachable", at: Number.MAX_SAFE_INTEGER },
    });
    expect(longest.length).toBeLessThanOrEqual(MAX_MEMBER_TOKEN_LENGTH);
    expect(signer.verify(longest, { group: id, member: id, session: id })).toBeDefined();
  });
});
