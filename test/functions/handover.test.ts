import { beforeEach, describe, expect, it, vi } from "vitest";
import { timers } from "../../functions/timers.js";
import { InvocationContext } from "../../shared/http/azure-functions.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { errorCodeOf, primaryOf, send, sendWithHeaders, WALL_START } from "../helpers/route-requests.js";
import { FakeClock } from "../helpers/fake-clock.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";
const sweepStandbys = timers.find((timer) => timer.name === "sweepStandbys")!;

/** POST /api/primary/{utype}/handover and the standbys in view (docs/api.md, docs/protocol.md#planned-handover). */
describe("POST /api/primary/{utype}/handover", () => {
  let clock: FakeClock;
  let store: CountingStore;
  let runtime: Runtime;
  let token: string;

  beforeEach(async () => {
    clock = new FakeClock(WALL_START);
    store = new CountingStore(new MemoryLeaseStore());
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { leases: store, clock });
    token = (await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", address: "10.0.0.4:5800" })).body["lease"] as string;
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby-b", address: "10.0.0.5:5800", announce: true });
    await clock.advance(100);
    store.reset();
  });

  it("to any, with an empty body: 202 with the view and the pending handover, one read and one write", async () => {
    const { status, body } = await sendWithHeaders(runtime, "POST", "/primary/scheduler/handover", undefined, undefined, { "content-length": "0" });
    expect(status).toBe(202);
    expect(body).toMatchObject({ utype: "scheduler", primary: { uuid: "holder" }, handover: { to: null, phase: "pending", requestedAt: new Date(WALL_START + 100).toISOString(), until: new Date(WALL_START + 5100).toISOString() } });
    expect(store.calls).toEqual(["read", "replace"]);
    // `{}` is the same request: nothing more is written.
    store.reset();
    expect((await send(runtime, "POST", "/primary/scheduler/handover", {})).status).toBe(202);
    expect(store.calls).toEqual(["read"]);
  });

  it("to a standby named by uuid or by address; the holder's renewal then carries it", async () => {
    const byAddress = await send(runtime, "POST", "/primary/scheduler/handover", { to: "10.0.0.5:5800" });
    expect(byAddress.status).toBe(202);
    expect(byAddress.body["handover"]).toMatchObject({ to: "standby-b", phase: "pending" });
    expect((await send(runtime, "POST", "/primary/scheduler/handover", { to: "standby-b" })).body["handover"]).toMatchObject({ to: "standby-b" });
    store.reset();
    const renewal = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: token });
    expect(renewal.status).toBe(200);
    expect(renewal.body["handover"]).toMatchObject({ to: "standby-b", phase: "pending" });
    // The request moved the ETag: the fast path's merge fails, and the renewal is decided on the entry.
    expect(store.calls).toEqual(["renew", "read", "replace"]);
    // While the handover is pending, every renewal is decided on the entry: a read and a write, no fast path.
    store.reset();
    const next = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: renewal.body["lease"] });
    expect(next.body["handover"]).toMatchObject({ to: "standby-b", phase: "pending" });
    expect(store.calls).toEqual(["read", "replace"]);
  });

  it("an address names the standby seen last with it (a restarted run, a new uuid at the same address); a uuid names itself", async () => {
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby-b-restarted", address: "10.0.0.5:5800", announce: true });
    expect((await send(runtime, "POST", "/primary/scheduler/handover", { to: "10.0.0.5:5800" })).body["handover"]).toMatchObject({ to: "standby-b-restarted" });
    expect((await send(runtime, "POST", "/primary/scheduler/handover", { to: "standby-b" })).body["handover"]).toMatchObject({ to: "standby-b" });
  });

  it("409 NoSuchStandby naming `to` and the standbys known; nothing written", async () => {
    const reply = await send(runtime, "POST", "/primary/scheduler/handover", { to: "10.9.9.9:1" });
    expect(reply.status).toBe(409);
    expect(errorCodeOf(reply)).toBe("NoSuchStandby");
    expect((reply.body["error"] as { message: string }).message).toMatch(/^to: "10\.9\.9\.9:1" names no standby of scheduler.*known: standby-b \(10\.0\.0\.5:5800\)/);
    expect(reply.body["standbys"]).toEqual([{ uuid: "standby-b", address: "10.0.0.5:5800", seenAt: new Date(WALL_START).toISOString() }]);
    expect(store.calls.filter((call) => call !== "read" && call !== "readStandbys")).toEqual([]);
    // The holder itself is no standby.
    expect(errorCodeOf(await send(runtime, "POST", "/primary/scheduler/handover", { to: "holder" }))).toBe("NoSuchStandby");
  });

  it("409 NoPrimary when nobody holds the role", async () => {
    const reply = await send(runtime, "POST", "/primary/nobody-here/handover", {});
    expect(reply.status).toBe(409);
    expect(errorCodeOf(reply)).toBe("NoPrimary");
    expect(reply.body).toMatchObject({ utype: "nobody-here", primary: null, handover: null });
  });

  it.each([
    [{ to: 5 }, /^to must be a standby's uuid or address/],
    [{ to: "" }, /^to must be a standby's uuid or address/],
    [{ too: "x" }, /^Unknown field "too": the body takes only to\./],
    ["[1]", /must be a JSON object/],
  ])("400 InvalidRequest naming the field for %j; nothing changes", async (body, message) => {
    const reply = await send(runtime, "POST", "/primary/scheduler/handover", body);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: { code: "InvalidRequest", message: expect.stringMatching(message) } });
    expect(store.calls).toEqual([]);
  });

  it("GET ?standbys=true adds the standbys seen within T (two reads side by side); without it one read", async () => {
    await send(runtime, "GET", "/primary/scheduler");
    expect(store.calls).toEqual(["read"]);
    store.reset();
    const shown = await send(runtime, "GET", "/primary/scheduler?standbys=true");
    expect([...store.calls].sort()).toEqual(["read", "readStandbys"]);
    expect(shown.body["standbys"]).toEqual([{ uuid: "standby-b", address: "10.0.0.5:5800", seenAt: new Date(WALL_START).toISOString() }]);
    expect(primaryOf(shown)).toMatchObject({ uuid: "holder" });
    expect(errorCodeOf(await send(runtime, "GET", "/primary/scheduler?standbys=yes"))).toBe("InvalidRequest");
    expect((await send(runtime, "GET", "/primary/scheduler?standbys=yes")).body).toMatchObject({ error: { message: expect.stringMatching(/^standbys must be true or false/) } });
  });

  it("a read with standbys never writes: a row not announced for T is left out of view, and the sweepStandbys timer deletes it", async () => {
    // c announces 2 s later than standby-b; the holder renews throughout.
    await clock.advance(1900);
    token = (await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: token })).body["lease"] as string;
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "c", address: "10.0.0.6:5800", announce: true });
    await clock.advance(3001);
    token = (await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: token })).body["lease"] as string;
    // standby-b was last seen T + 1 ms ago, c 3001 ms ago.
    store.reset();
    const one = await send(runtime, "GET", "/primary/scheduler?standbys=true");
    expect(one.body["standbys"]).toEqual([{ uuid: "c", address: "10.0.0.6:5800", seenAt: new Date(WALL_START + 2000).toISOString() }]);
    expect([...store.calls].sort()).toEqual(["read", "readStandbys"]);
    store.reset();
    const all = await send(runtime, "GET", "/primary?standbys=true&vacant=true");
    expect((all.body["primaries"] as Array<{ standbys: unknown[] }>)[0]?.standbys).toEqual([expect.objectContaining({ uuid: "c" })]);
    expect([...store.calls].sort()).toEqual(["list", "listStandbys"]);
    // The stale row is still stored: only the sweeper deletes it, and only it.
    expect((await store.readStandbys("scheduler")).map((row) => row.uuid).sort()).toEqual(["c", "standby-b"]);
    store.reset();
    const logs: string[] = [];
    await sweepStandbys.handler(runtime, new InvocationContext({ logHandler: (_level, ...args) => logs.push(args.map(String).join(" ")) }));
    expect(store.calls).toEqual(["listStandbys", "deleteStandby"]);
    expect(logs).toEqual(["sweepStandbys: removed the standby rows not announced for T: scheduler/standby-b."]);
    expect((await store.readStandbys("scheduler")).map((row) => row.uuid)).toEqual(["c"]);
    // Nothing stale left: the next sweep only reads.
    store.reset();
    await sweepStandbys.handler(runtime, new InvocationContext({ logHandler: () => undefined }));
    expect(store.calls).toEqual(["listStandbys"]);
  });

  it("?standbys=true leaves out the role's ended uuids, with no write: a standby retired by DELETE ?uuid= is gone from view at once", async () => {
    expect((await send(runtime, "GET", "/primary/scheduler?standbys=true")).body["standbys"]).toEqual([expect.objectContaining({ uuid: "standby-b" })]);
    expect((await send(runtime, "DELETE", "/primary/scheduler?uuid=standby-b")).status).toBe(409);
    store.reset();
    expect((await send(runtime, "GET", "/primary/scheduler?standbys=true")).body["standbys"]).toEqual([]);
    expect([...store.calls].sort()).toEqual(["read", "readStandbys"]);
    // Its row is still stored, announced less than T ago: the view judged it by the entry's ended uuids.
    expect((await store.readStandbys("scheduler")).map((row) => row.uuid)).toEqual(["standby-b"]);
  });

  it("a heartbeat's announce must be a boolean; a refused poll without it writes nothing", async () => {
    const bad = await send(runtime, "PUT", "/primary/scheduler", { uuid: "c", announce: "yes" });
    expect(bad.body).toEqual({ error: { code: "InvalidRequest", message: "announce must be true or false." } });
    store.reset();
    expect((await send(runtime, "PUT", "/primary/scheduler", { uuid: "c" })).status).toBe(409);
    expect(store.calls).toEqual(["read"]);
    store.reset();
    expect((await send(runtime, "PUT", "/primary/scheduler", { uuid: "c", announce: true })).status).toBe(409);
    expect(store.calls).toEqual(["read", "upsertStandby"]);
  });

  it("a standby row the store fails to write is best effort: the refusal is still the answer, and the failure is logged", async () => {
    const upsert = vi.spyOn(store, "upsertStandby").mockRejectedValueOnce(new StoreUnavailableError("The lease store did not answer."));
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const reply = await send(runtime, "PUT", "/primary/scheduler", { uuid: "c", address: "10.0.0.6:5800", announce: true });
      expect(reply.status).toBe(409);
      expect(errorCodeOf(reply)).toBe("LeaseHeld");
      expect(primaryOf(reply)).toMatchObject({ uuid: "holder" });
      expect(upsert).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls).toEqual([["Could not record c as a standby of scheduler: The lease store did not answer."]]);
      expect((await store.readStandbys("scheduler")).map((row) => row.uuid)).toEqual(["standby-b"]);
    } finally {
      warn.mockRestore();
      upsert.mockRestore();
    }
  });

  it("an announcement never starts a term: on a free role it is 409 Conflict and nothing is written", async () => {
    store.reset();
    const reply = await send(runtime, "PUT", "/primary/free-role", { uuid: "late-copy", announce: true });
    expect(reply.status).toBe(409);
    expect(errorCodeOf(reply)).toBe("Conflict");
    expect(reply.body).toMatchObject({ primary: null, epoch: 0 });
    expect(store.calls.filter((call) => call !== "read" && call !== "readTerms")).toEqual([]);
    // The holder's own announcement (a renewal) is accepted as a renewal.
    expect((await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", announce: true })).status).toBe(200);
  });

  it("409 NoSuchStandby naming when the standby was last seen, once it missed its announcement: not seen within T/2 + 2·I", async () => {
    // standby-b announced at WALL_START; T/2 + 2·I = 4500 ms. Seen 4500 ms ago it may still be live.
    await clock.advance(4400);
    store.reset();
    const live = await send(runtime, "POST", "/primary/scheduler/handover", { to: "standby-b" });
    expect(live.status).toBe(202);
    // Named again 101 ms later it is past its announcement by over 2·I, still within T (so
    // ?standbys=true still lists it), and refused; nothing is written.
    await clock.advance(101);
    store.reset();
    const stale = await send(runtime, "POST", "/primary/scheduler/handover", { to: "10.0.0.5:5800" });
    expect(stale.status).toBe(409);
    expect(errorCodeOf(stale)).toBe("NoSuchStandby");
    const seenAt = new Date(WALL_START).toISOString();
    expect(stale.body["lastSeen"]).toEqual({ uuid: "standby-b", address: "10.0.0.5:5800", seenAt });
    expect(stale.body["standbys"]).toEqual([]);
    expect((stale.body["error"] as { message: string }).message).toBe(
      `to: "10.0.0.5:5800" names standby-b (10.0.0.5:5800), a standby of scheduler last seen at ${seenAt}: a live standby announces itself every T/2 (2500 ms), ` +
        "so one not seen within 4500 ms (T/2 + 2·I, at most T) has stopped or lost contact, and a handover to it would leave the role without a primary for T; " +
        "none is known (a standby announces itself while it polls). Name one of them, or leave out to for any.",
    );
    expect(store.calls.filter((call) => call !== "read" && call !== "readStandbys")).toEqual([]);
    expect((await send(runtime, "GET", "/primary/scheduler?standbys=true")).body["standbys"]).toEqual([{ uuid: "standby-b", address: "10.0.0.5:5800", seenAt }]);
  });

  it("DELETE ?uuid=…&standby=true withdraws a standby: its row goes at once, the entry is not written, the holder keeps its fast path", async () => {
    const withdrawn = await send(runtime, "DELETE", "/primary/scheduler?uuid=standby-b&standby=true");
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body).toMatchObject({ utype: "scheduler", primary: { uuid: "holder" }, handover: null });
    expect([...store.calls].sort()).toEqual(["deleteStandby", "read"]);
    expect((await send(runtime, "GET", "/primary/scheduler?standbys=true")).body["standbys"]).toEqual([]);
    const named = await send(runtime, "POST", "/primary/scheduler/handover", { to: "standby-b" });
    expect(errorCodeOf(named)).toBe("NoSuchStandby");
    expect(named.body["lastSeen"]).toBeUndefined();
    // Not retired (it held nothing): the ended uuids are for those that did. The holder's
    // next renewal is still one conditional merge.
    store.reset();
    expect((await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: token })).status).toBe(200);
    expect(store.calls).toEqual(["renew"]);
    // Withdrawing again, or a uuid with no row, is the same answer.
    expect((await send(runtime, "DELETE", "/primary/scheduler?uuid=standby-b&standby=true")).status).toBe(200);
  });

  it("a withdrawal drops a handover that names the standby, pending or reserved: nobody waits for a standby that left", async () => {
    expect((await send(runtime, "POST", "/primary/scheduler/handover", { to: "standby-b" })).status).toBe(202);
    store.reset();
    const withdrawn = await send(runtime, "DELETE", "/primary/scheduler?uuid=standby-b&standby=true");
    expect(withdrawn.body).toMatchObject({ primary: { uuid: "holder" }, handover: null });
    expect([...store.calls].sort()).toEqual(["deleteStandby", "read", "replace"]);
    expect((await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: token })).body["handover"]).toBeNull();

    // Reserved: the holder released for b; b stops instead of taking over; anyone may take the role at once.
    const renewal = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: token });
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby-b", address: "10.0.0.5:5800", announce: true });
    await send(runtime, "POST", "/primary/scheduler/handover", { to: "standby-b" });
    const pending = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: renewal.body["lease"] as string });
    expect((await send(runtime, "DELETE", `/primary/scheduler?uuid=holder&lease=${encodeURIComponent(pending.body["lease"] as string)}`)).body["handover"]).toMatchObject({ phase: "reserved", to: "standby-b" });
    expect((await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby-c" })).status).toBe(409);
    expect((await send(runtime, "DELETE", "/primary/scheduler?uuid=standby-b&standby=true")).body).toMatchObject({ primary: null, handover: null });
    expect((await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby-c" })).status).toBe(200);
  });

  it.each([
    ["/primary/scheduler?uuid=standby-b&standby=true&lease=abc", /^standby=true withdraws a standby, which holds no lease/],
    ["/primary/scheduler?uuid=standby-b&standby=yes", /^standby must be true or false/],
    ["/primary/scheduler?standby=true", /^uuid is required/],
  ])("400 InvalidRequest for DELETE %s; nothing changes", async (path, message) => {
    const reply = await send(runtime, "DELETE", path);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: { code: "InvalidRequest", message: expect.stringMatching(message) } });
    expect(store.calls).toEqual([]);
  });
});
