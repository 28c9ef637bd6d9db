import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdentityProviderUnavailableError, TokenRefusedError, TokenVerifier } from "../../shared/http/token-verifier.js";
import { HEAD_A, LocalIssuer, OTHER_TENANT, TEST_AUDIENCE, TEST_TENANT } from "../helpers/local-issuer.js";

/**
 * Bearer tokens as the service checks them, against a local Entra stand-in (keys and tokens
 * made here, no network): each way a token can be wrong is refused, with the reason.
 */
let issuer: LocalIssuer;

beforeAll(async () => {
  issuer = await LocalIssuer.start();
});
afterAll(() => issuer.close());

function verifier(options: { monotonicNow?: () => number; audiences?: string[] } = {}): TokenVerifier {
  return new TokenVerifier(
    { tenantId: TEST_TENANT, audiences: options.audiences ?? [TEST_AUDIENCE], authority: issuer.authority },
    options.monotonicNow === undefined ? {} : { monotonicNow: options.monotonicNow },
  );
}

async function refusal(token: string, check = verifier()): Promise<string> {
  const error = await check.verify(token).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TokenRefusedError);
  return (error as Error).message;
}

describe("TokenVerifier", () => {
  it("accepts the tenant's token for the audience and names the identity by object id and application id", async () => {
    expect(await verifier().verify(issuer.token(HEAD_A))).toEqual({ objectId: HEAD_A.oid, appId: HEAD_A.appid });
  });

  it("accepts a v1.0 token (appid, the v1 issuer form) and an audience among several", async () => {
    const v1 = issuer.token(HEAD_A, { claims: { iss: `${issuer.authority}/${TEST_TENANT}/`, appid: HEAD_A.appid, aud: "api://second", ver: "1.0" }, without: ["azp"] });
    expect(await verifier({ audiences: [TEST_AUDIENCE, "api://second"] }).verify(v1)).toEqual({ objectId: HEAD_A.oid, appId: HEAD_A.appid });
  });

  it("refuses a token for another audience", async () => {
    expect(await refusal(issuer.token(HEAD_A, { claims: { aud: "https://management.azure.com" } }))).toMatch(/another audience.*request it for api:\/\/ha-module-test/);
  });

  it("refuses an expired token, and accepts one within the minute of clock difference", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await refusal(issuer.token(HEAD_A, { claims: { exp: now - 120 } }))).toMatch(/expired/);
    await expect(verifier().verify(issuer.token(HEAD_A, { claims: { exp: now - 30 } }))).resolves.toBeDefined();
    expect(await refusal(issuer.token(HEAD_A, { without: ["exp"] }))).toMatch(/no expiry/);
  });

  it("refuses a token not valid yet", async () => {
    expect(await refusal(issuer.token(HEAD_A, { claims: { nbf: Math.floor(Date.now() / 1000) + 600 } }))).toMatch(/not valid yet/);
  });

  it("refuses a token of another tenant, or of another issuer", async () => {
    expect(await refusal(issuer.token(HEAD_A, { claims: { iss: `${issuer.authority}/${OTHER_TENANT}/v2.0`, tid: OTHER_TENANT } }))).toMatch(/not issued by the tenant/);
    expect(await refusal(issuer.token(HEAD_A, { claims: { iss: `https://sts.windows.net/${OTHER_TENANT}/` } }))).toMatch(/not issued by the tenant/);
    expect(await refusal(issuer.token(HEAD_A, { claims: { iss: "https://evil.example/v2.0" } }))).toMatch(/not issued by the tenant/);
  });

  it("refuses a tampered token: claims changed after signing, or a signature from a key the tenant does not publish", async () => {
    const [header, , signature] = issuer.token(HEAD_A).split(".");
    const otherPayload = issuer.token({ oid: "cccccccc-0000-4000-8000-00000000000c", appid: HEAD_A.appid }).split(".")[1];
    expect(await refusal(`${header}.${otherPayload}.${signature}`)).toMatch(/signature does not verify/);
    const stray = LocalIssuer.strayKey("key-1");
    expect(await refusal(issuer.token(HEAD_A, { key: stray }))).toMatch(/signature does not verify/);
  });

  it("refuses another spelling of the same signature bytes (base64url's unused low bits changed): only the token as issued", async () => {
    const [header, payload, signature = ""] = issuer.token(HEAD_A).split(".");
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(signature.at(-1) ?? "A");
    const respelled = `${signature.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(Buffer.from(respelled, "base64url")).toEqual(Buffer.from(signature, "base64url"));
    expect(await refusal(`${header}.${payload}.${respelled}`)).toMatch(/signature does not verify/);
  });

  it("refuses alg none and HS256 (the public key used as an HMAC secret)", async () => {
    expect(await refusal(issuer.token(HEAD_A, { unsigned: true }))).toMatch(/not a signed JWT/);
    expect(await refusal(`${issuer.token(HEAD_A, { unsigned: true })}AAAA`)).toMatch(/algorithm "none" is not accepted/);
    expect(await refusal(issuer.token(HEAD_A, { hmacSecret: issuer.publicPem() }))).toMatch(/algorithm "HS256" is not accepted/);
    expect(await refusal(issuer.token(HEAD_A, { header: { alg: "constructor" } }))).toMatch(/not accepted/);
  });

  it("refuses what is not a JWT at all", async () => {
    for (const token of ["", "abc", "a.b", "a.b.c.d", "e30.e30.%%%", "bm90IGpzb24.e30.AAAA", `e30.${"A".repeat(20_000)}.AAAA`]) {
      await refusal(token);
    }
  });

  it("fetches the key set once more for an unknown kid (a rollover), at most once a minute", async () => {
    let monotonic = 0;
    const check = verifier({ monotonicNow: () => monotonic });
    await check.verify(issuer.token(HEAD_A));
    const fetched = issuer.jwksFetches;
    // Within a minute of the last fetch a made-up kid costs no fetch.
    expect(await refusal(issuer.token(HEAD_A, { key: LocalIssuer.strayKey("made-up") }), check)).toMatch(/does not publish/);
    expect(issuer.jwksFetches).toBe(fetched);
    const kid = issuer.rotate();
    monotonic += 61_000;
    // The rotated key is fetched, once, and its tokens are accepted.
    await expect(check.verify(issuer.token(HEAD_A))).resolves.toMatchObject({ objectId: HEAD_A.oid });
    expect(issuer.jwksFetches).toBe(fetched + 1);
    expect(kid).toMatch(/^key-/);
    monotonic += 61_000;
    expect(await refusal(issuer.token(HEAD_A, { key: LocalIssuer.strayKey("still-unknown") }), check)).toMatch(/does not publish/);
    expect(issuer.jwksFetches).toBe(fetched + 2);
  });

  it("answers IdentityProviderUnavailableError when the key set cannot be fetched, and keeps a set it has", async () => {
    issuer.down = true;
    try {
      await expect(verifier().verify(issuer.token(HEAD_A))).rejects.toBeInstanceOf(IdentityProviderUnavailableError);
    } finally {
      issuer.down = false;
    }
    let monotonic = 0;
    const check = verifier({ monotonicNow: () => monotonic });
    await check.verify(issuer.token(HEAD_A));
    issuer.down = true;
    try {
      monotonic += 25 * 3_600_000;
      await expect(check.verify(issuer.token(HEAD_A))).resolves.toMatchObject({ objectId: HEAD_A.oid });
    } finally {
      issuer.down = false;
    }
  });
});
