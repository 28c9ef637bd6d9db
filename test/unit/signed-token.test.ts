import { describe, expect, it } from "vitest";
import { isCount, sameSecret, SignedToken } from "../../shared/service/signed-token.js";

/** The envelope both fast-path tokens use (the lease token and the member token have their own tests of their claims). */
describe("SignedToken", () => {
  const claims = ["scheduler", "uuid-1", 3, "etag-1", null];

  it("opens what it sealed, and seals the same claims to the same token", () => {
    const signer = new SignedToken("t1", "secret");
    const token = signer.seal(claims);
    expect(token).toMatch(/^t1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(signer.seal(claims)).toBe(token);
    expect(signer.open(token, 5, 1000)).toEqual(claims);
  });

  it("opens nothing sealed under another secret, another version, or with another claim count", () => {
    const token = new SignedToken("t1", "secret").seal(claims);
    expect(new SignedToken("t1", "other").open(token, 5, 1000)).toBeUndefined();
    expect(new SignedToken("t2", "secret").open(token, 5, 1000)).toBeUndefined();
    expect(new SignedToken("t1", "secret").open(token, 4, 1000)).toBeUndefined();
    // Without a secret each signer draws its own: a token opens only where it was issued.
    expect(new SignedToken("t1").open(new SignedToken("t1").seal(claims), 5, 1000)).toBeUndefined();
  });

  it("opens nothing tampered with, truncated, over its length limit, or not an envelope", () => {
    const signer = new SignedToken("t1", "secret");
    const token = signer.seal(claims);
    const [version, payload, signature] = token.split(".");
    const otherPayload = Buffer.from(JSON.stringify(["scheduler", "uuid-1", 4, "etag-1", null])).toString("base64url");
    for (const bad of [
      `${version}.${otherPayload}.${signature}`,
      `${version}.${payload}.${signature!.slice(0, -1)}`,
      `${version}.${payload}`,
      `${token}.extra`,
      "",
      "t1..",
      `t1.${Buffer.from("not json").toString("base64url")}.${signature}`,
    ]) {
      expect(signer.open(bad, 5, 1000), bad).toBeUndefined();
    }
    expect(signer.open(token, 5, token.length - 1)).toBeUndefined();
    // A well-signed payload that is not an array of claims opens as nothing.
    expect(signer.open(signer.seal({ a: 1 } as unknown as unknown[]), 5, 1000)).toBeUndefined();
  });

  it("sameSecret and isCount", () => {
    expect(sameSecret("abc", "abc")).toBe(true);
    expect(sameSecret("abc", "abd")).toBe(false);
    expect(sameSecret("abc", "abcd")).toBe(false);
    expect([0, 5, Number.MAX_SAFE_INTEGER].every(isCount)).toBe(true);
    expect([-1, 1.5, Number.NaN, "1", null].some(isCount)).toBe(false);
  });
});
