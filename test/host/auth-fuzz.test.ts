/**
 * A fuzz of the credentials a caller sends, against the local host with tokens, named keys
 * and grants (the same checks as the Azure app). The attacker holds head B's key and token
 * and a key pair of its own, and may mangle anything; it wants to write cluster A's role or
 * group, which only head A may. One seeded PRNG draws every case: a failing run prints its
 * seed, and HA_FUZZ_SEED=<seed> replays it; HA_FUZZ_COUNT sets the number (default 600).
 *
 * Invariants: every answer is 401 or 403 with the contract's JSON error (never 2xx, never
 * 5xx), nothing reaches the store, and head A's own credentials still work at the end.
 */
import { randomInt } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { loadAuthConfig } from "../../shared/config/auth-config.js";
import { startLocalHost, type LocalHost } from "../../shared/host/local-host.js";
import { createAccess } from "../../shared/http/access.js";
import { createRuntime } from "../../shared/http/runtime.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { CountingMemberStore } from "../helpers/counting-member-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { grantSettings, HEAD_A, HEAD_B, KEYS } from "../helpers/grants-fixture.js";
import { LocalIssuer, OTHER_TENANT, TEST_AUDIENCE, TEST_TENANT } from "../helpers/local-issuer.js";
import { head, sendThenRead } from "../helpers/raw-http.js";
import { Prng } from "../helpers/sim/prng.js";

const SEED = Number(process.env["HA_FUZZ_SEED"] ?? randomInt(2 ** 31));
const COUNT = Number(process.env["HA_FUZZ_COUNT"] ?? 600);

let issuer: LocalIssuer;
let host: LocalHost;
let port: number;
let leases: CountingStore;
let members: CountingMemberStore;

beforeAll(async () => {
  issuer = await LocalIssuer.start();
  leases = new CountingStore(new MemoryLeaseStore());
  members = new CountingMemberStore(new MemoryMemberStore());
  const runtime = createRuntime({ timing: { intervalMs: 1000, timeoutMs: 5000 }, storeTimeoutMs: 2000, leaseSecret: "a-test-secret-that-is-long-enough-for-hmac" }, { leases, members });
  host = await startLocalHost({ operations, runtime: async () => runtime, port: 0, access: createAccess(loadAuthConfig(grantSettings(issuer.authority))), log: () => undefined });
  port = Number(new URL(host.url).port);
}, 30_000);
afterAll(async () => {
  await Promise.all([host?.close(), issuer?.close()]);
});

/** Flips one character of `text` (within [from, to)) to another base64url character. */
function flip(random: Prng, text: string, from = 0, to = text.length): string {
  if (to <= from) return text;
  const at = random.int(from, to - 1);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  let replacement = random.pick([...alphabet]);
  while (replacement === text[at]) replacement = random.pick([...alphabet]);
  return `${text.slice(0, at)}${replacement}${text.slice(at + 1)}`;
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/** A token that claims to be head A, or is head A's mangled, or head B's in disguise; never head A's as issued. */
function forgedToken(random: Prng): string {
  const genuine = issuer.token(HEAD_A);
  const [header = "", payload = "", signature = ""] = genuine.split(".");
  const now = Math.floor(Date.now() / 1000);
  switch (random.int(0, 13)) {
    case 0:
      return `${header}.${payload}.${flip(random, signature)}`;
    case 1:
      return `${header}.${flip(random, payload)}.${signature}`;
    case 2:
      return `${flip(random, header)}.${payload}.${signature}`;
    case 3: // head B's signed token with head A's claims pasted in
      return `${header}.${payload}.${issuer.token(HEAD_B).split(".")[2]}`;
    case 4:
      return issuer.token(HEAD_A, { key: LocalIssuer.strayKey(random.pick(["key-1", "stray", ""])) });
    case 5:
      return issuer.token(HEAD_A, { unsigned: true }) + random.pick(["", "AAAA", signature]);
    case 6:
      return issuer.token(HEAD_A, { hmacSecret: random.pick([issuer.publicPem(), "", "secret"]) });
    case 7:
      return `${b64({ alg: random.pick(["none", "None", "RS512", "PS256", "ES256", "rs256", "", "RS256 "]), kid: "key-1", typ: "JWT" })}.${payload}.${signature}`;
    case 8:
      return issuer.token(HEAD_A, { claims: { aud: random.pick([`${TEST_AUDIENCE}/`, TEST_AUDIENCE.toUpperCase(), ["api://other"], "", null, 1]) } });
    case 9:
      return issuer.token(HEAD_A, { claims: { iss: random.pick([`${issuer.authority}/${OTHER_TENANT}/v2.0`, `${issuer.authority}/${TEST_TENANT}/v2.0/`, `${issuer.authority}/${TEST_TENANT.toUpperCase()}/v2.0`, "", null]) } });
    case 10:
      return issuer.token(HEAD_A, { claims: random.pick([{ exp: now - 3600 }, { exp: String(now + 3600) }, { exp: null }, { nbf: now + 3600 }, { nbf: "0" }]) });
    case 11:
      return issuer.token(HEAD_A, { header: { kid: random.pick([undefined, "", 1, "../key-1", "key-1 ", "KEY-1"]) } });
    case 12:
      // (Not a trailing space: HTTP trims it, and the token is then head A's own.)
      return `${header}.${payload}.${signature}${random.pick(["=", "==", ".", "A", "AA", "%3D"])}`;
    default:
      return issuer.token(HEAD_B, { claims: { oid: HEAD_A.oid, azp: HEAD_A.appid }, key: LocalIssuer.strayKey("key-1") });
  }
}

/** The credential headers of one case: a mangled token or key, alone or beside head B's real ones. */
function credentials(random: Prng): string[] {
  const lines: string[] = [];
  const authorization = random.pick([
    () => `Authorization: Bearer ${forgedToken(random)}`,
    () => `Authorization: ${random.pick(["bearer", "BEARER", "Bearer  ", "Basic", "Token", "Bearer\t"])} ${forgedToken(random)}`,
    () => `Authorization: Bearer ${issuer.token(HEAD_B)}`,
    () => `Authorization: Bearer ${forgedToken(random)}, Bearer ${issuer.token(HEAD_B)}`,
    () => undefined,
  ])();
  if (authorization !== undefined) lines.push(authorization);
  if (random.chance(0.5)) lines.push(`Authorization: Bearer ${forgedToken(random)}`);
  const key = random.pick([
    () => KEYS["head-b"],
    () => KEYS["head-a"].slice(0, -1),
    () => ` ${KEYS["head-a"]}\u0000`,
    () => KEYS["head-a"].toUpperCase(),
    () => `${KEYS["head-a"]}x`,
    () => flip(random, KEYS["head-a"]),
    () => undefined,
  ])();
  if (key !== undefined) lines.push(`${random.pick(["x-functions-key", "X-Functions-Key", "x-functions-key "])}: ${key}`);
  if (random.chance(0.3)) lines.push(`x-functions-key: ${KEYS["head-b"]}`);
  return lines;
}

describe(`auth fuzz (HA_FUZZ_SEED=${SEED})`, () => {
  it(`${COUNT} mangled credentials never write cluster A's role or group`, async () => {
    const random = new Prng(SEED);
    const problems: string[] = [];
    for (let index = 0; index < COUNT; index += 1) {
      const target = random.pick([
        ["PUT", "/api/primary/cluster-a.scheduler", JSON.stringify({ uuid: "intruder" })],
        ["DELETE", "/api/primary/cluster-a.scheduler?uuid=intruder", ""],
        ["PUT", "/api/members/cluster-a/intruder", JSON.stringify({ session: "s" })],
        ["DELETE", "/api/members/cluster-a/intruder?session=s", ""],
      ] as const);
      const [method, path, body] = target;
      const code = random.chance(0.2) ? `${path.includes("?") ? "&" : "?"}code=${encodeURIComponent(random.pick([KEYS["head-b"], `${KEYS["head-a"]}x`, ""]))}` : "";
      const lines = ["Host: 127.0.0.1", ...credentials(random), "Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`];
      const request = head(`${method} ${path}${code} HTTP/1.1`, lines) + body;
      const { responses, error } = await sendThenRead(port, [request], 10_000);
      const answer = responses[0];
      const what = `case ${index}: ${method} ${path}${code} with ${lines.slice(1, -2).join(" | ").slice(0, 400)}`;
      if (answer === undefined) {
        problems.push(`${what}: no answer (${error ?? "timeout"})`);
        continue;
      }
      const code401or403 = answer.status === 401 || answer.status === 403 || (answer.status === 400 && /header/i.test(answer.body));
      let parsed: { error?: { code?: string } } = {};
      try {
        parsed = JSON.parse(answer.body) as typeof parsed;
      } catch {
        problems.push(`${what}: not JSON: ${answer.body.slice(0, 200)}`);
      }
      if (!code401or403 || parsed.error?.code === undefined) problems.push(`${what}: ${answer.status} ${answer.body.slice(0, 300)}`);
    }
    expect(problems, `HA_FUZZ_SEED=${SEED}`).toEqual([]);
    expect(leases.calls.filter((call) => call !== "read" && call !== "readTerms"), `HA_FUZZ_SEED=${SEED}`).toEqual([]);
    expect(members.calls, `HA_FUZZ_SEED=${SEED}`).toEqual([]);
    // Head A itself still gets in: the checks refused the forgeries, not everything.
    const own = await fetch(`${host.url}/primary/cluster-a.scheduler`, {
      method: "PUT",
      headers: { authorization: `Bearer ${issuer.token(HEAD_A)}`, "content-type": "application/json" },
      body: JSON.stringify({ uuid: "head-a" }),
    });
    expect(own.status).toBe(200);
  }, 300_000);
});
