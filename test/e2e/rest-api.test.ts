import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, ReleaseOptions, ReleaseResult } from "../../shared/sdk/index.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { call, errorCodeOf, primaryOf, type Reply } from "../helpers/e2e-http.js";
import { checkRecordedResponses } from "../helpers/openapi-responses.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * The REST contract (docs/api.md) driven over HTTP against `ha-module serve` running as a real
 * process, once per real backend. Each backend is the environment the process gets.
 */
const backends: Array<{ name: string; env: Record<string, string> }> = [
  { name: "Azure Table on embedded Azurite", env: {} },
  { name: "Azure Cosmos DB on the embedded emulator", env: { HA_STORE: "cosmos" } },
  { name: "PostgreSQL on the embedded server", env: { HA_STORE: "postgres" } },
];

// Small I and T keep the expiry test short; T leaves seconds of slack for a loaded machine.
const TIMING = { HA_INTERVAL_MS: "500", HA_TIMEOUT_MS: "2500" };

/** The contract's tests against one backend, on a service of its own. */
function restContract({ env }: { env: Record<string, string> }): void {
  let service: ServiceProcess;
  let api: string;
  let counter = 0;
  const freshUtype = (): string => `role-${Date.now()}-${++counter}`;

  beforeAll(async () => {
    service = await startServiceProcess({ ...TIMING, ...env });
    api = service.url;
  });
  afterAll(async () => {
    // Every answer this suite received, checked against the document the service serves.
    const { checked, problems } = await checkRecordedResponses(api);
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(100);
    expect(await service.stop()).toBe(0);
  });

  it("reports health and the effective store", async () => {
    const reply = await call(api, "GET", "/health");
    expect(reply.status).toBe(200);
    expect(reply.body["status"]).toBe("ok");
    expect(typeof reply.body["store"]).toBe("string");
  });

  it("acquires an empty lease, rejects a rival, then lets the rival take over after expiry with epoch + 1", async () => {
    const utype = freshUtype();
    const empty = await call(api, "GET", `/primary/${utype}`);
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ utype, primary: null, epoch: 0, intervalMs: 500, timeoutMs: 2500 });

    const before = Date.now();
    const acquired = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", address: "10.0.0.4:5800" });
    expect(acquired.status).toBe(200);
    expect(primaryOf(acquired)).toMatchObject({ uuid: "holder-a", address: "10.0.0.4:5800" });
    // The first term's epoch: the service's clock in ms at the grant (docs/design/epochs.md), this machine's.
    const first = primaryOf(acquired)!["epoch"] as number;
    expect(first).toBeGreaterThanOrEqual(before);
    expect(first).toBeLessThan(Date.now() + 16);
    expect(typeof acquired.body["lease"]).toBe("string");

    const rival = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-b" });
    expect(rival.status).toBe(409);
    expect(errorCodeOf(rival)).toBe("LeaseHeld");
    expect(primaryOf(rival)).toMatchObject({ uuid: "holder-a", epoch: first });

    // Wait, polling, until the server itself reports no primary: no fixed sleep to tune.
    const deadline = Date.now() + 20_000;
    let seen = await call(api, "GET", `/primary/${utype}`);
    while (primaryOf(seen) !== null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await call(api, "GET", `/primary/${utype}`);
    }
    expect(primaryOf(seen)).toBeNull();
    expect(seen.body["epoch"]).toBe(first); // expired, and still the role's epoch

    const takeover = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-b" });
    expect(takeover.status).toBe(200);
    expect(primaryOf(takeover)).toMatchObject({ uuid: "holder-b", address: null });
    expect(primaryOf(takeover)!["epoch"]).toBeGreaterThan(first);
  });

  it("renews with and without the lease token, keeping the epoch", async () => {
    const utype = freshUtype();
    const first = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a" });
    const epoch = primaryOf(first)!["epoch"];
    const fast = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", lease: first.body["lease"] });
    expect(fast.status).toBe(200);
    expect(primaryOf(fast)).toMatchObject({ uuid: "holder-a", epoch });
    expect(fast.body["lease"]).not.toBe(first.body["lease"]);
    const slow = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", lease: "not-a-token" });
    expect(slow.status).toBe(200);
    expect(primaryOf(slow)).toMatchObject({ uuid: "holder-a", epoch });
    // A token for someone else's lease is not the caller's: the slow path rejects the rival.
    const stolen = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-b", lease: slow.body["lease"] });
    expect(stolen.status).toBe(409);
    expect(errorCodeOf(stolen)).toBe("LeaseHeld");
  });

  it("releases with the holder's lease token so that a rival takes it over at once with epoch + 1", async () => {
    const utype = freshUtype();
    const acquired = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a" });
    const lease = acquired.body["lease"] as string;
    const epoch = primaryOf(acquired)!["epoch"] as number;
    const notHolder = await call(api, "DELETE", `/primary/${utype}?uuid=holder-b`);
    expect(notHolder.status).toBe(409);
    expect(errorCodeOf(notHolder)).toBe("LeaseHeld");

    const released = await call(api, "DELETE", `/primary/${utype}?uuid=holder-a&lease=${encodeURIComponent(lease)}`);
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ utype, primary: null, epoch });
    const takeover = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-c" });
    expect(takeover.status).toBe(200);
    expect(primaryOf(takeover)).toMatchObject({ uuid: "holder-c" });
    expect(primaryOf(takeover)!["epoch"]).toBeGreaterThan(epoch);
    // Released and retired uuids never start a new term.
    for (const uuid of ["holder-a", "holder-b"]) expect(errorCodeOf(await call(api, "PUT", `/primary/${utype}`, { uuid }))).toBe("LeaseRevoked");
  });

  it("revokes without the token: the holder stays primary (revoked) until it expires, and its heartbeats are refused", async () => {
    const utype = freshUtype();
    const acquired = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", address: "10.0.0.4:5800" });
    const lease = acquired.body["lease"];
    const epoch = primaryOf(acquired)!["epoch"] as number;
    const revoked = await call(api, "DELETE", `/primary/${utype}?uuid=holder-a`);
    expect(revoked.status).toBe(200);
    expect(primaryOf(revoked)).toMatchObject({ uuid: "holder-a", address: "10.0.0.4:5800", epoch, revoked: true });
    expect(errorCodeOf(await call(api, "PUT", `/primary/${utype}`, { uuid: "standby" }))).toBe("LeaseHeld");
    const refused = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", lease });
    expect(refused.status).toBe(409);
    expect(errorCodeOf(refused)).toBe("LeaseRevoked");
    expect(primaryOf(refused)).toMatchObject({ uuid: "holder-a", revoked: true });
    const deadline = Date.now() + 20_000;
    let takeover = await call(api, "PUT", `/primary/${utype}`, { uuid: "standby" });
    while (takeover.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      takeover = await call(api, "PUT", `/primary/${utype}`, { uuid: "standby" });
    }
    expect(primaryOf(takeover)).toMatchObject({ uuid: "standby", revoked: false });
    expect(primaryOf(takeover)!["epoch"]).toBeGreaterThan(epoch);
  });

  it("keeps the stored address when a heartbeat omits it, on the fast and the slow path; null clears it", async () => {
    const utype = freshUtype();
    const first = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", address: "10.0.0.4:5800" });
    const fast = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", lease: first.body["lease"] });
    expect(primaryOf(fast)).toMatchObject({ address: "10.0.0.4:5800" });
    const slow = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a" });
    expect(primaryOf(slow)).toMatchObject({ address: "10.0.0.4:5800" });
    expect(primaryOf(await call(api, "GET", `/primary/${utype}`))).toMatchObject({ address: "10.0.0.4:5800" });
    const cleared = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", address: null, lease: slow.body["lease"] });
    expect(primaryOf(cleared)).toMatchObject({ address: null });
    expect(primaryOf(await call(api, "GET", `/primary/${utype}`))).toMatchObject({ address: null });
  });

  it("answers 4 concurrent renewals with one token 200 (or a Conflict naming the holder), and an elector whose heartbeats all go out 4 times is never demoted", async () => {
    const utype = freshUtype();
    const acquired = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a" });
    const lease = acquired.body["lease"];
    const epoch = primaryOf(acquired)!["epoch"];
    const replies = await Promise.all(Array.from({ length: 4 }, () => call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", lease })));
    for (const reply of replies) {
      expect([200, 409]).toContain(reply.status);
      if (reply.status === 409) expect(errorCodeOf(reply)).toBe("Conflict");
      expect(primaryOf(reply)).toMatchObject({ uuid: "holder-a", epoch });
    }

    const elector = new PrimaryElector({ utype: freshUtype(), transport: new DuplicatingClient(api, 4), retryDelayInMs: 100 });
    const events: string[] = [];
    elector.on("elected", () => void events.push("elected"));
    elector.on("demoted", ({ reason }) => void events.push(`demoted:${reason}`));
    elector.start();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await elector.stop();
    expect(events).toEqual(["elected", "demoted:stopped"]);
    expect(elector.stats().heartbeatRoundTrip.count).toBeGreaterThanOrEqual(3);
  });

  it("lets exactly one of 20 concurrent PUTs by distinct uuids win a fresh utype", async () => {
    const utype = freshUtype();
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(api, "PUT", `/primary/${utype}`, { uuid: `racer-${i}` })),
    );
    const winners = replies.filter((reply) => reply.status === 200);
    expect(winners).toHaveLength(1);
    // The others lose to the lease (409), or, the process busy with 20 at once (an embedded
    // emulator runs in it), are shed before the store or run out of store time (503).
    const losers = replies.filter((reply) => reply.status !== 200).map((reply) => (reply.status === 409 ? "409" : `${reply.status} ${String(errorCodeOf(reply))}`));
    expect(losers.filter((answer) => !["409", "503 Overloaded", "503 StoreUnavailable"].includes(answer))).toEqual([]);
    expect(losers.filter((answer) => answer === "409").length).toBeGreaterThan(0);
    const winner = primaryOf(winners[0] as Reply);
    const now = await call(api, "GET", `/primary/${utype}`);
    expect(primaryOf(now)).toMatchObject({ uuid: winner?.["uuid"], epoch: winner?.["epoch"] });
  });

  it("lists live primaries across roles for name resolving", async () => {
    const utype = freshUtype();
    await call(api, "PUT", `/primary/${utype}`, { uuid: "lister", address: "host:1" });
    const listed = await call(api, "GET", "/primary");
    expect(listed.status).toBe(200);
    const primaries = listed.body["primaries"] as Array<{ utype: string; primary: { uuid: string } }>;
    expect(primaries.find((view) => view.utype === utype)?.primary.uuid).toBe("lister");
  });

  it("answers malformed input with 400/413 naming the field, and writes nothing", async () => {
    const utype = freshUtype();
    const cases: Array<[string, string, unknown, number, RegExp]> = [
      ["PUT", `/primary/bad%20utype`, { uuid: "a" }, 400, /utype/],
      ["PUT", `/primary/${"x".repeat(129)}`, { uuid: "a" }, 400, /utype/],
      ["PUT", `/primary/${utype}`, { uuid: "has space" }, 400, /uuid/],
      ["PUT", `/primary/${utype}`, { uuid: "u".repeat(129) }, 400, /uuid/],
      ["PUT", `/primary/${utype}`, {}, 400, /uuid/],
      ["PUT", `/primary/${utype}`, { uuid: "a", epoch: 9 }, 400, /epoch/],
      ["PUT", `/primary/${utype}`, { uuid: "a", address: 5 }, 400, /address/],
      ["PUT", `/primary/${utype}`, { uuid: "a", address: "x".repeat(513) }, 400, /address/],
      ["PUT", `/primary/${utype}`, { uuid: ".." }, 400, /uuid must not be "\." or "\.\."/],
      ["PUT", `/primary/${utype}`, { uuid: "a", address: "\u{1F600}".repeat(513) }, 400, /at most 512 characters \(got 513\)/],
      ["PUT", `/primary/${utype}`, "{not json", 400, /JSON/],
      ["PUT", `/primary/${utype}`, "[1,2]", 400, /JSON object/],
      ["PUT", `/primary/${utype}`, { uuid: "a", address: "y".repeat(5000) }, 413, /limit/],
      ["DELETE", `/primary/${utype}`, undefined, 400, /uuid/],
      ["DELETE", `/primary/${utype}?uuid=a&force=1`, undefined, 400, /force/],
      ["DELETE", `/primary/${utype}?uuid=.`, undefined, 400, /uuid must not be/],
    ];
    for (const [method, path, body, status, message] of cases) {
      const reply = await call(api, method, path, body);
      expect(reply.status, `${method} ${path} ${JSON.stringify(body)?.slice(0, 60)}`).toBe(status);
      const error = reply.body["error"] as { code: string; message: string };
      expect(error.message).toMatch(message);
      expect(error.code).toBe(status === 413 ? "PayloadTooLarge" : "InvalidRequest");
      expect(JSON.stringify(reply.body)).not.toMatch(/at .*\.js:\d+/);
    }
    expect(primaryOf(await call(api, "GET", `/primary/${utype}`))).toBeNull();
    const listed = await call(api, "GET", "/primary");
    const primaries = listed.body["primaries"] as Array<{ utype: string }>;
    expect(primaries.some((view) => view.utype === utype)).toBe(false);
  });

  it("treats a malformed lease token (not a string) as absent, and counts the address in code points", async () => {
    const utype = freshUtype();
    const address = "\u{1F600}".repeat(300);
    const reply = await call(api, "PUT", `/primary/${utype}`, { uuid: "a", address, lease: 123 });
    expect(reply.status).toBe(200);
    expect(primaryOf(reply)).toMatchObject({ uuid: "a", address, epoch: expect.any(Number) });
  });

  it("serves its OpenAPI document, which names every route it serves", async () => {
    const reply = await call(api, "GET", "/openapi.json");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
    expect(reply.body["openapi"]).toBe("3.1.0");
    expect(Object.keys(reply.body["paths"] as object)).toEqual(expect.arrayContaining(["/api/primary/{utype}", "/api/primary/{utype}/history", "/api/members/{group}/{member}"]));
  });

  it("hands a role over to a named standby: announce, request by address, the holder's renewal shows it, proven release, only the named standby takes over", async () => {
    const utype = freshUtype();
    const first = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", address: "10.0.0.4:5800" });
    expect((await call(api, "PUT", `/primary/${utype}`, { uuid: "standby-b", address: "10.0.0.5:5800", announce: true })).status).toBe(409);
    expect((await call(api, "PUT", `/primary/${utype}`, { uuid: "standby-c", address: "10.0.0.6:5800", announce: true })).status).toBe(409);
    const shown = await call(api, "GET", `/primary/${utype}?standbys=true`);
    expect((shown.body["standbys"] as Array<{ uuid: string }>).map((standby) => standby.uuid).sort()).toEqual(["standby-b", "standby-c"]);

    const unknown = await call(api, "POST", `/primary/${utype}/handover`, { to: "10.9.9.9:1" });
    expect(unknown.status).toBe(409);
    expect(errorCodeOf(unknown)).toBe("NoSuchStandby");
    const requested = await call(api, "POST", `/primary/${utype}/handover`, { to: "10.0.0.6:5800" });
    expect(requested.status).toBe(202);
    expect(requested.body["handover"]).toMatchObject({ to: "standby-c", phase: "pending" });

    const renewal = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", lease: first.body["lease"] });
    expect(renewal.status).toBe(200);
    expect(renewal.body["handover"]).toMatchObject({ to: "standby-c", phase: "pending" });
    const released = await call(api, "DELETE", `/primary/${utype}?uuid=holder-a&lease=${encodeURIComponent(renewal.body["lease"] as string)}`);
    expect(released.body).toMatchObject({ primary: null, handover: { to: "standby-c", phase: "reserved" } });
    const other = await call(api, "PUT", `/primary/${utype}`, { uuid: "standby-b" });
    expect(other.status).toBe(409);
    expect(errorCodeOf(other)).toBe("LeaseHeld");
    const taken = await call(api, "PUT", `/primary/${utype}`, { uuid: "standby-c" });
    expect(taken.status).toBe(200);
    expect(taken.body).toMatchObject({ primary: { uuid: "standby-c" }, handover: null });
    expect(primaryOf(taken)!["epoch"]).toBeGreaterThan(primaryOf(first)!["epoch"] as number);

    const vacant = await call(api, "GET", "/primary?vacant=true");
    expect(vacant.status).toBe(200);
    expect(errorCodeOf(await call(api, "POST", `/primary/${freshUtype()}/handover`))).toBe("NoPrimary");
  });

  it("shows a role's term history: the live term, then the ended ones with how they ended", async () => {
    const utype = freshUtype();
    expect((await call(api, "GET", `/primary/${utype}/history`)).body).toEqual({ utype, epoch: 0, terms: [] });
    const acquired = await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-a", address: "10.0.0.4:5800" });
    const lease = acquired.body["lease"] as string;
    await call(api, "DELETE", `/primary/${utype}?uuid=holder-a&lease=${encodeURIComponent(lease)}`);
    const second = primaryOf(await call(api, "PUT", `/primary/${utype}`, { uuid: "holder-b" }))!["epoch"] as number;
    const firstEpoch = primaryOf(acquired)!["epoch"] as number;
    expect(second).toBeGreaterThan(firstEpoch);
    const history = await call(api, "GET", `/primary/${utype}/history`);
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({
      utype,
      epoch: second,
      terms: [
        { epoch: second, uuid: "holder-b", address: null, endedAt: null, endedBy: null },
        { epoch: firstEpoch, uuid: "holder-a", address: "10.0.0.4:5800", endedBy: "released" },
      ],
    });
    const [live, released] = history.body["terms"] as Array<{ startedAt: string; endedAt: string }>;
    expect(Date.parse(released?.endedAt ?? "")).toBeLessThanOrEqual(Date.parse(live?.startedAt ?? ""));
    expect((await call(api, "GET", `/primary/${utype}/history?limit=1`)).body["terms"]).toHaveLength(1);
    const bad = await call(api, "GET", `/primary/${utype}/history?limit=0`);
    expect(bad.status).toBe(400);
    expect(errorCodeOf(bad)).toBe("InvalidRequest");
  });

  it("answers membership: join, renew by token, list the group and the groups, a held member, goodbye", async () => {
    const group = `group-${freshUtype()}`;
    const joined = await call(api, "PUT", `/members/${group}/node-1`, { session: "s-1", address: "10.0.0.5:80" });
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ group, member: { member: "node-1", session: "s-1", state: "joining", heartbeats: 1 } });
    const renewed = await call(api, "PUT", `/members/${group}/node-1`, { session: "s-1", token: joined.body["token"] });
    expect(renewed.body).toMatchObject({ member: { state: "active", heartbeats: 2 } });
    const held = await call(api, "PUT", `/members/${group}/node-1`, { session: "s-2" });
    expect(held.status).toBe(409);
    expect(errorCodeOf(held)).toBe("SessionHeld");
    const listed = await call(api, "GET", `/members/${group}`);
    expect(listed.body).toMatchObject({ group, members: [{ member: "node-1", state: "active" }] });
    const groups = await call(api, "GET", "/members");
    expect((groups.body["groups"] as Array<{ group: string }>).find((one) => one.group === group)).toMatchObject({ members: { active: 1 } });
    const left = await call(api, "DELETE", `/members/${group}/node-1?session=s-1`);
    expect(left.body).toMatchObject({ member: { state: "leaving" } });
    const ended = await call(api, "PUT", `/members/${group}/node-1`, { session: "s-1" });
    expect(errorCodeOf(ended)).toBe("SessionEnded");
    expect((await call(api, "DELETE", `/members/${group}/node-9?session=s-9`)).body).toMatchObject({ member: null });
    expect((await call(api, "PUT", `/members/${group}/node-2`, { session: "s", extra: 1 })).status).toBe(400);
  });

  it("answers a participant heartbeat over HTTP: 3 roles, a member and its group in one POST, each part as its own route; renewals with the tokens; unchanged; a body over 4 KiB up to 64 KiB", async () => {
    const group = `group-${freshUtype()}`;
    const roles = [freshUtype(), freshUtype(), freshUtype()];
    const held = await call(api, "PUT", `/primary/${roles[1]}`, { uuid: "someone-else" });
    expect(held.status).toBe(200);
    const body = (tokens: ReadonlyMap<string, string>, since?: string): Record<string, unknown> => ({
      roles: roles.map((utype) => ({ utype, uuid: "head-1", address: "10.0.0.4:5800", lease: tokens.get(utype) })),
      members: [{ group, member: "head-1", session: "s-1", address: "10.0.0.4:5800", token: tokens.get("member") }],
      groups: [{ group, ...(since === undefined ? {} : { since }) }],
    });
    type Part = { status: number; body: Record<string, unknown>; utype?: string };
    const first = await call(api, "POST", "/heartbeat", body(new Map()));
    expect(first.status).toBe(200);
    const firstRoles = first.body["roles"] as Part[];
    expect(firstRoles.map((part) => [part.utype, part.status])).toEqual([
      [roles[0], 200],
      [roles[1], 409],
      [roles[2], 200],
    ]);
    expect(firstRoles[1]?.body).toMatchObject({ error: { code: "LeaseHeld" }, primary: { uuid: "someone-else" } });
    const tokens = new Map<string, string>();
    for (const part of firstRoles) if (part.status === 200) tokens.set(part.utype ?? "", part.body["lease"] as string);
    const member = (first.body["members"] as Part[])[0];
    expect(member).toMatchObject({ group, member: "head-1", status: 200, body: { member: { state: "joining" } } });
    tokens.set("member", member?.body["token"] as string);

    const second = await call(api, "POST", "/heartbeat", body(tokens));
    expect((second.body["roles"] as Part[]).map((part) => part.status)).toEqual([200, 409, 200]);
    expect((second.body["roles"] as Part[])[0]?.body).toMatchObject({ primary: { uuid: "head-1", epoch: (firstRoles[0]?.body["primary"] as { epoch: number }).epoch } });
    expect((second.body["members"] as Part[])[0]?.body).toMatchObject({ member: { state: "active", heartbeats: 2 } });
    // The single route shows what the part did.
    expect((await call(api, "GET", `/primary/${roles[0]}`)).body).toMatchObject({ primary: { uuid: "head-1", address: "10.0.0.4:5800" } });
    const listed = await call(api, "POST", "/heartbeat", { groups: [{ group }] });
    const cursor = ((listed.body["groups"] as Part[])[0]?.body["cursor"] as string) ?? "";
    expect((listed.body["groups"] as Part[])[0]?.body).toMatchObject({ members: [{ member: "head-1", state: "active" }] });
    const unchanged = await call(api, "POST", "/heartbeat", { groups: [{ group, since: cursor }] });
    expect((unchanged.body["groups"] as Part[])[0]).toEqual({ group, status: 200, body: { group, intervalMs: 500, timeoutMs: 2500, ttlMs: 7500, cursor, unchanged: true } });

    // The local host takes this route's larger body (over 4 KiB, up to 64 KiB), and no larger.
    const address = "é".repeat(512);
    const large = { reads: Array.from({ length: 16 }, (_, index) => ({ utype: `${roles[0]}-${index}` })), members: Array.from({ length: 16 }, (_, index) => ({ group, member: `n-${index}`, session: "s", address })) };
    expect(Buffer.byteLength(JSON.stringify(large))).toBeGreaterThan(16 * 1024);
    const accepted = await call(api, "POST", "/heartbeat", large);
    expect(accepted.status).toBe(200);
    expect((accepted.body["members"] as Part[]).every((part) => part.status === 200)).toBe(true);
    const tooLarge = await call(api, "POST", "/heartbeat", { roles: [{ utype: roles[0], uuid: "x", lease: "t".repeat(70_000) }] });
    expect(tooLarge.status).toBe(413);
    expect(errorCodeOf(tooLarge)).toBe("PayloadTooLarge");
    const named = await call(api, "POST", "/heartbeat", { roles: [{ utype: roles[0], uuid: "ok" }, { utype: roles[2], uuid: "bad/uuid" }] });
    expect(named.status).toBe(400);
    expect(named.body["error"]).toMatchObject({ code: "InvalidRequest", message: expect.stringMatching(/^roles\[1\]\.uuid must be/) });
    // The PUT routes keep their 4 KiB.
    expect((await call(api, "PUT", `/primary/${roles[0]}`, { uuid: "head-1", lease: "t".repeat(5000) })).status).toBe(413);
  });

  it("answers unknown routes with 404 and wrong methods with 405", async () => {
    const unknown = await call(api, "GET", "/nothing-here");
    expect(unknown.status).toBe(404);
    expect(errorCodeOf(unknown)).toBe("NotFound");
    const wrong = await call(api, "POST", `/primary/${freshUtype()}`, { uuid: "a" });
    expect(wrong.status).toBe(405);
    expect(errorCodeOf(wrong)).toBe("MethodNotAllowed");
    expect(wrong.headers.get("allow")).toBe("GET, PUT, DELETE");
  });
}

/**
 * The backends run side by side, each on its own service (their waits for expiry overlap),
 * and beside the start-up tests below; within a backend the tests run one after another,
 * as written.
 */
describe.each(backends)("REST contract end to end: $name", { concurrent: true }, (backend) => {
  describe.sequential("on its own service, one test after another", () => restContract(backend));
});

// Each test its own service, and each suite checks only its own service's answers: these run beside the backends.
describe("local host start-up and API key", { concurrent: true }, () => {
  it("requires x-functions-key when HA_API_KEY is set", async () => {
    const service = await startServiceProcess({ ...TIMING, HA_API_KEY: "s3cret-key" });
    try {
      const missing = await call(service.url, "GET", "/primary/x");
      expect(missing.status).toBe(401);
      expect(errorCodeOf(missing)).toBe("Unauthorized");
      const wrong = await call(service.url, "PUT", "/primary/x", { uuid: "a" }, { "x-functions-key": "nope" });
      expect(wrong.status).toBe(401);
      expect(primaryOf(await call(service.url, "GET", "/primary/x", undefined, { "x-functions-key": "s3cret-key" }))).toBeNull();
      const ok = await call(service.url, "PUT", "/primary/x", { uuid: "a" }, { "x-functions-key": "s3cret-key" });
      expect(ok.status).toBe(200);
      const { checked, problems } = await checkRecordedResponses(service.url, { "x-functions-key": "s3cret-key" });
      expect(problems).toEqual([]);
      expect(checked).toBe(4);
    } finally {
      await service.stop();
    }
  });

  it("refuses to start on a bad setting, naming the variable", async () => {
    await expect(startServiceProcess({ HA_INTERVAL_MS: "1000", HA_TIMEOUT_MS: "2000" })).rejects.toThrow(
      /exited with 2[\s\S]*HA_TIMEOUT_MS \(2000\) must be greater than 2 × HA_INTERVAL_MS/,
    );
  });
});

/** Sends every heartbeat `copies` times at once (a retry, a proxy's duplicate) and answers with the last. */
class DuplicatingClient implements LeaseTransport {
  readonly #client: HaClient;

  constructor(
    endpoint: string,
    private readonly copies: number,
  ) {
    this.#client = new HaClient({ endpoint });
  }

  getPrimary(utype: string, options?: CallOptions): Promise<LeaseView> {
    return this.#client.getPrimary(utype, options);
  }

  async heartbeat(utype: string, request: HeartbeatBody, options?: CallOptions): Promise<HeartbeatResult> {
    const results = await Promise.all(Array.from({ length: this.copies }, () => this.#client.heartbeat(utype, request, options)));
    return results.at(-1)!;
  }

  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult> {
    return this.#client.release(utype, uuid, options);
  }
}
