import { describe, expect, it } from "vitest";
import { MAX_LEASE_TOKEN_LENGTH } from "../../shared/contract/input-rules.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";

const claims = { utype: "scheduler", uuid: "holder", epoch: 7, etag: 'W/"datetime\'2026-11-20T10%3A00%3A00.1Z\'"', address: "10.0.0.4:5800" };
const caller = { utype: "scheduler", uuid: "holder" };

describe("lease token", () => {
  const signer = new LeaseTokenSigner("0123456789abcdef0123456789abcdef");

  it("round-trips the claims for the caller it was issued to", () => {
    expect(signer.verify(signer.issue(claims), caller)).toEqual(claims);
  });

  it("carries the holder's address, or null", () => {
    expect(signer.verify(signer.issue({ ...claims, address: null }), caller)?.address).toBeNull();
    expect(signer.verify(signer.issue(claims), caller)?.address).toBe("10.0.0.4:5800");
  });

  it("the largest token the server can issue is within the length a token may have, and fits a 4 KiB body", () => {
    const longest = "x".repeat(128);
    const largest = signer.issue({
      utype: longest,
      uuid: longest,
      epoch: Number.MAX_SAFE_INTEGER,
      // A Table ETag, with room to spare.
      etag: `W/"datetime'${"2026-11-20T10%3A00%3A00.1234567Z".padEnd(150, "0")}'"`,
      address: "\u{1F600}".repeat(512),
    });
    expect(largest.length).toBeLessThanOrEqual(MAX_LEASE_TOKEN_LENGTH);
    expect(signer.verify(largest, { utype: longest, uuid: longest })?.epoch).toBe(Number.MAX_SAFE_INTEGER);
    // A renewal body without the address (as the SDK sends it) stays within the 4 KiB limit.
    expect(Buffer.byteLength(JSON.stringify({ uuid: longest, lease: largest }))).toBeLessThanOrEqual(4096);
  });

  it("carries the holder's priority when it is not 0; a token of priority 0 is the token of before priorities", () => {
    expect(signer.verify(signer.issue({ ...claims, priority: -1_000_000 }), caller)).toEqual({ ...claims, priority: -1_000_000 });
    expect(signer.issue({ ...claims, priority: 0 })).toBe(signer.issue(claims));
    expect(signer.verify(signer.issue({ ...claims, priority: 0 }), caller)).toEqual(claims);
    // The largest token with a priority still fits.
    const longest = "x".repeat(128);
    const largest = signer.issue({ utype: longest, uuid: longest, epoch: Number.MAX_SAFE_INTEGER, etag: `W/"${"0".repeat(160)}"`, address: "\u{1F600}".repeat(512), priority: -1_000_000 });
    expect(largest.length).toBeLessThanOrEqual(MAX_LEASE_TOKEN_LENGTH);
    // Checked by its HMAC (another signer of the same secret), not only remembered.
    expect(new LeaseTokenSigner("0123456789abcdef0123456789abcdef").verify(signer.issue({ ...claims, priority: 4 }), caller)?.priority).toBe(4);
  });

  it("a string longer than any issued token is refused without being parsed", () => {
    const token = signer.issue(claims);
    expect(signer.verify(`${token}${"A".repeat(MAX_LEASE_TOKEN_LENGTH)}`, caller)).toBeUndefined();
  });

  it("a v1 token (before the address was carried) is treated as absent", () => {
    const payload = Buffer.from(JSON.stringify(["scheduler", "holder", 7, claims.etag])).toString("base64url");
    expect(signer.verify(`v1.${payload}.sig`, caller)).toBeUndefined();
  });

  it("is opaque text safe in JSON and URLs", () => {
    expect(signer.issue(claims)).toMatch(/^v2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it("is refused for another uuid or another utype", () => {
    const token = signer.issue(claims);
    expect(signer.verify(token, { utype: "scheduler", uuid: "rival" })).toBeUndefined();
    expect(signer.verify(token, { utype: "broker", uuid: "holder" })).toBeUndefined();
  });

  it("is refused when signed with another secret, or by a per-process random secret elsewhere", () => {
    const other = new LeaseTokenSigner("fedcba9876543210fedcba9876543210");
    expect(signer.verify(other.issue(claims), caller)).toBeUndefined();
    expect(new LeaseTokenSigner().verify(new LeaseTokenSigner().issue(claims), caller)).toBeUndefined();
  });

  it("is refused when any part is tampered with", () => {
    const [version, payload, signature] = signer.issue(claims).split(".") as [string, string, string];
    const forgedPayload = Buffer.from(JSON.stringify(["scheduler", "holder", 99, claims.etag, null])).toString("base64url");
    for (const token of [
      `${version}.${forgedPayload}.${signature}`,
      `v3.${payload}.${signature}`,
      `${version}.${payload}.${signature.slice(0, -2)}`,
      `${version}.${payload}`,
      `${version}.${payload}.${signature}.extra`,
      "",
      "....",
    ]) {
      expect(signer.verify(token, caller), token).toBeUndefined();
    }
  });
});

describe("lease token: the signer remembers the last token it issued per utype", () => {
  it("verifies a remembered token exactly as the HMAC check does: same claims, and only for its own caller", () => {
    const issuer = new LeaseTokenSigner("0123456789abcdef0123456789abcdef");
    const fresh = new LeaseTokenSigner("0123456789abcdef0123456789abcdef"); // same secret, remembers nothing
    const token = issuer.issue(claims);
    expect(issuer.verify(token, caller)).toEqual(fresh.verify(token, caller));
    expect(issuer.verify(token, caller)).toEqual(claims);
    expect(issuer.verify(token, { utype: "scheduler", uuid: "rival" })).toBeUndefined();
    expect(issuer.verify(token, { utype: "other", uuid: "holder" })).toBeUndefined();
  });

  it("a token the signer no longer remembers (superseded or evicted) still verifies by its HMAC", () => {
    const issuer = new LeaseTokenSigner("0123456789abcdef0123456789abcdef", 1);
    const older = issuer.issue({ ...claims, epoch: 6 });
    const newer = issuer.issue(claims);
    expect(issuer.verify(older, caller)?.epoch).toBe(6);
    issuer.issue({ ...claims, utype: "evicts-scheduler" });
    expect(issuer.verify(newer, caller)).toEqual(claims);
  });

  it("what it remembers cannot be changed through the claims object it was given", () => {
    const issuer = new LeaseTokenSigner("0123456789abcdef0123456789abcdef");
    const given = { ...claims };
    const token = issuer.issue(given);
    given.epoch = 99;
    expect(issuer.verify(token, caller)?.epoch).toBe(7);
  });
});

describe("lease token: remembering changes no answer", () => {
  it("a token issued with claims the HMAC path refuses (epoch 0) is refused all the same", () => {
    const issuer = new LeaseTokenSigner("0123456789abcdef0123456789abcdef");
    expect(issuer.verify(issuer.issue({ ...claims, epoch: 0 }), caller)).toBeUndefined();
  });
});
