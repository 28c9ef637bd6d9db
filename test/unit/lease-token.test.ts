import { describe, expect, it } from "vitest";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";

const claims = { utype: "scheduler", uuid: "holder", epoch: 7, etag: 'W/"datetime\'2026-11-20T10%3A00%3A00.1Z\'"' };
const caller = { utype: "scheduler", uuid: "holder" };

describe("lease token", () => {
  const signer = new LeaseTokenSigner("0123456789abcdef0123456789abcdef");

  it("round-trips the claims for the caller it was issued to", () => {
    expect(signer.verify(signer.issue(claims), caller)).toEqual(claims);
  });

  it("is opaque text safe in JSON and URLs", () => {
    expect(signer.issue(claims)).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
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
    const forgedPayload = Buffer.from(JSON.stringify(["scheduler", "holder", 99, claims.etag])).toString("base64url");
    for (const token of [
      `${version}.${forgedPayload}.${signature}`,
      `v2.${payload}.${signature}`,
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
