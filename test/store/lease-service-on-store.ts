import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HeartbeatResult } from "../../shared/contract/outcomes.js";
import { LeaseService } from "../../shared/lease/lease-service.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import type { LeaseState } from "../../shared/lease/lease.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import { StandbySweeper } from "../../shared/lease/standby-sweeper.js";
import { RECORDED_TERMS_MARGIN, UNKNOWN_HOLDER, UNRECORDED_TERMS_MARGIN } from "../../shared/lease/missing-entry.js";
import type { TermRecord } from "../../shared/lease/term-record.js";
import { CountingStore } from "../helpers/counting-store.js";
import { FakeClock, COUNTER_ONLY } from "../helpers/fake-clock.js";

/** The fence of a deleted entry whose history records terms up to `highest`, the newest row written by this version. */
const FENCE = (highest: number, margin = RECORDED_TERMS_MARGIN): { uuid: string; epoch: number } => ({ uuid: `${UNKNOWN_HOLDER}:${highest + margin}`, epoch: highest + margin });
/** The same when the newest row was written by an earlier version (no `transactional` mark). */
const LEGACY_FENCE = (highest: number): { uuid: string; epoch: number } => FENCE(highest, UNRECORDED_TERMS_MARGIN);

/**
 * A store of the suite, and what an operator or an earlier version can do to its rows
 * behind the service: delete a role's entry, write a history row by itself.
 */
export interface StoreUnderService {
  readonly store: LeaseStore;
  deleteEntry(utype: string): Promise<void>;
  /**
   * Writes one history row alone, as versions before the rows were written with their entry
   * did (without the `transactional` mark): the creation mark before the entry, an ended
   * term after it.
   */
  writeLegacyTerm(term: Omit<TermRecord, "transactional">): Promise<void>;
}

export interface ServiceOnStoreTarget {
  setUp?(): Promise<void>;
  tearDown?(): Promise<void>;
  /** Over empty storage; called once per test. */
  createStore(): Promise<StoreUnderService>;
}

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const T = TIMING.timeoutMs;
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";
const WALL_START = Date.UTC(2026, 10, 20, 10, 0, 0);

/** Every store call of `inner`, with `before` run once ahead of the first call of `method` that `when` picks. */
function interleaved(inner: LeaseStore, method: "read" | "create" | "replace", when: (first: unknown) => boolean, before: () => Promise<unknown>): LeaseStore {
  let armed = true;
  const hooked =
    <A extends unknown[], R>(name: typeof method, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (armed && name === method && when(args[0])) {
        armed = false;
        await before();
      }
      return call(...args);
    };
  return {
    kind: inner.kind,
    read: hooked("read", (utype: string, options?) => inner.read(utype, options)),
    create: hooked("create", (lease, options?, also?) => inner.create(lease, options, also)),
    replace: hooked("replace", (lease, etag: string, options?, also?) => inner.replace(lease, etag, options, also)),
    renew: (...args) => inner.renew(...args),
    list: (...args) => inner.list(...args),
    ping: (...args) => inner.ping(...args),
    readTerms: (...args) => inner.readTerms(...args),
    upsertStandby: (...args) => inner.upsertStandby(...args),
    readStandbys: (...args) => inner.readStandbys(...args),
    listStandbys: (...args) => inner.listStandbys(...args),
    deleteStandby: (...args) => inner.deleteStandby(...args),
  };
}

/** The epoch-0 row marking a role's creation, wherever a store call carries it (alone, or beside the entry it goes with). */
function carriesCreationMark(args: readonly unknown[]): boolean {
  const isMark = (value: unknown): boolean => typeof value === "object" && value !== null && (value as { epoch?: unknown; endedAt?: unknown }).epoch === 0 && "endedAt" in value;
  return args.some((arg) => isMark(arg) || (typeof arg === "object" && arg !== null && Object.values(arg).some(isMark)));
}

/**
 * Every store call of `inner`, with `after` run once right after the first call that
 * wrote the role's creation mark: between the mark and the entry where a service writes
 * them apart, right after both where it writes them in one transaction.
 */
function afterCreationMark(inner: LeaseStore, after: () => Promise<unknown>): LeaseStore {
  let armed = true;
  return new Proxy(inner, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const result: unknown = await (value as (...called: unknown[]) => Promise<unknown>).apply(target, args);
        if (armed && carriesCreationMark(args)) {
          armed = false;
          await after();
        }
        return result;
      };
    },
  });
}

function leaseOf(result: HeartbeatResult): string {
  if (result.outcome !== "accepted") throw new Error(`expected accepted, got ${result.outcome}`);
  return result.lease;
}

/**
 * The lease service over each store (memory, Azurite, the Cosmos emulator): what happens
 * when its entry is deleted behind it, and when writes race in ways a test can only
 * arrange by interleaving store calls (docs/protocol.md).
 */
export function describeLeaseServiceOnStore(name: string, target: ServiceOnStoreTarget): void {
  describe(`the lease service on ${name}`, () => {
    beforeAll(async () => target.setUp?.());
    afterAll(async () => target.tearDown?.());

    const serviceOver = (store: LeaseStore, clock: FakeClock, warn: (message: string) => void = () => {}): LeaseService =>
      new LeaseService({ epochClock: COUNTER_ONLY, store, clock, monotonic: clock, timing: TIMING, tokens: new LeaseTokenSigner(SECRET), storeTimeoutMs: 10_000, warn });

    describe("epochs floored by the clock (docs/design/epochs.md)", () => {
      it("an epoch of ms of ha_time (about 1.8e12, past 32 bits) round-trips the entry, the fast path's token and the history ring exactly", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = new LeaseService({ store, clock, monotonic: clock, timing: TIMING, tokens: new LeaseTokenSigner(SECRET), storeTimeoutMs: 10_000 });
        const utype = "clock-epochs";
        const a = await service.heartbeat({ utype, uuid: "a" });
        // WALL_START is a multiple of 16 ms: the first epoch is the slot after 0's.
        expect(a.view.primary).toMatchObject({ uuid: "a", epoch: WALL_START + 1 });
        expect((await store.read(utype))?.epoch).toBe(WALL_START + 1);
        await clock.advance(1000);
        expect((await service.heartbeat({ utype, uuid: "a", lease: leaseOf(a) })).view.primary).toMatchObject({ epoch: WALL_START + 1 });
        await clock.advance(T + 1);
        const b = await service.heartbeat({ utype, uuid: "b" });
        const taken = WALL_START + 1000 + T + 1;
        // The clock rounded up to the slot after epoch WALL_START + 1's (2).
        expect(b.view.primary).toMatchObject({ uuid: "b", epoch: taken + ((2 - (taken % 16) + 16) % 16) });
        expect((await store.read(utype))?.epoch).toBe(b.view.primary!.epoch);
        const history = await service.history(utype, 16);
        expect(history.terms.map((term) => [term.epoch, term.uuid])).toEqual([
          [b.view.primary!.epoch, "b"],
          [WALL_START + 1, "a"],
        ]);
        expect((await store.readTerms(utype)).map((row) => row.epoch).sort((x, y) => x - y)).toEqual([0, WALL_START + 1]);
      });
    });

    describe("a planned handover", () => {
      it("goes to the named standby at once and only to it, through announce, request, renewal, proven release", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const utype = "handover";
        const a = await service.heartbeat({ utype, uuid: "a", address: "host-a:1" });
        // Two standbys announce themselves on refused polls; one more poll without the flag writes nothing.
        expect((await service.heartbeat({ utype, uuid: "b", address: "host-b:1", announce: true })).outcome).toBe("held");
        await clock.advance(100);
        expect((await service.heartbeat({ utype, uuid: "c", address: "host-c:1", announce: true })).outcome).toBe("held");
        const shown = await service.getPrimary(utype, undefined, { standbys: true });
        expect(shown.standbys?.map((standby) => standby.uuid)).toEqual(["b", "c"]);
        expect(shown.standbys?.[0]).toEqual({ uuid: "b", address: "host-b:1", seenAt: new Date(WALL_START).toISOString() });

        expect((await service.handover(utype, "nobody")).outcome).toBe("no-such-standby");
        // Named by its address.
        const requested = await service.handover(utype, "host-b:1");
        expect(requested).toMatchObject({ outcome: "requested", view: { primary: { uuid: "a" }, handover: { to: "b", phase: "pending" } } });

        // The holder's token no longer matches the entry: its renewal is decided on it and shows the handover.
        await clock.advance(200);
        const renewal = await service.heartbeat({ utype, uuid: "a", lease: leaseOf(a) });
        expect(renewal).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "a" }, handover: { to: "b", phase: "pending" } } });
        // Its next renewal too (no fast path while pending), still within T of the request.
        const again = await service.heartbeat({ utype, uuid: "a", lease: leaseOf(renewal) });
        expect(again).toMatchObject({ outcome: "accepted", view: { handover: { to: "b" } } });

        // It steps down: a proven release reserves the role for b.
        const released = await service.release({ utype, uuid: "a", lease: leaseOf(again) });
        expect(released).toMatchObject({ outcome: "released", view: { primary: null, handover: { to: "b", phase: "reserved" } } });
        expect((await service.heartbeat({ utype, uuid: "c" })).outcome).toBe("held");
        const taken = await service.heartbeat({ utype, uuid: "b", address: "host-b:1" });
        expect(taken).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "b", epoch: 2 }, handover: null } });
        // The new holder's renewal is one write again (no handover pending).
        const counted = new CountingStore(store);
        await serviceOver(counted, clock).heartbeat({ utype, uuid: "b", lease: leaseOf(taken) });
        expect(counted.calls).toEqual(["renew"]);
        // b holds: it is no standby any more; c still is.
        expect((await service.getPrimary(utype, undefined, { standbys: true })).standbys?.map((standby) => standby.uuid)).toEqual(["c"]);
      });

      it("refuses the holder's renewals after the request + T when it never steps down, and lets anyone take over after the release + T", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const utype = "stubborn";
        let token = leaseOf(await service.heartbeat({ utype, uuid: "a" }));
        expect((await service.handover(utype, undefined)).outcome).toBe("requested");
        for (let step = 0; step < 4; step++) {
          await clock.advance(1000);
          token = leaseOf(await service.heartbeat({ utype, uuid: "a", lease: token }));
        }
        await clock.advance(1001);
        expect((await service.heartbeat({ utype, uuid: "a", lease: token })).outcome).toBe("revoked");
        // Its lease runs out from its last accepted renewal, as a revoke's does.
        expect((await service.heartbeat({ utype, uuid: "b" })).outcome).toBe("held");
        await clock.advance(T);
        expect((await service.heartbeat({ utype, uuid: "b" })).outcome).toBe("accepted");
        expect((await service.handover("never-held", undefined)).outcome).toBe("no-primary");
      });

      it("lists vacant roles with since when, and standbys, only when asked", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const a = await service.heartbeat({ utype: "released-role", uuid: "a" });
        await service.heartbeat({ utype: "expired-role", uuid: "x" });
        await service.heartbeat({ utype: "live-role", uuid: "l" });
        await service.heartbeat({ utype: "live-role", uuid: "s", address: "s:1", announce: true });
        await service.release({ utype: "released-role", uuid: "a", lease: leaseOf(a) });
        const releasedAt = clock.now();
        await clock.advance(T + 1);
        await service.heartbeat({ utype: "live-role", uuid: "l" });
        await service.heartbeat({ utype: "live-role", uuid: "s", address: "s:1", announce: true });
        expect((await service.listPrimaries()).map((view) => view.utype)).toEqual(["live-role"]);
        const all = await service.listPrimaries(undefined, { vacant: true, standbys: true });
        expect(all.map((view) => [view.utype, view.vacantSince ?? null])).toEqual([
          ["expired-role", new Date(WALL_START + T).toISOString()],
          ["live-role", null],
          ["released-role", new Date(releasedAt).toISOString()],
        ]);
        expect(all.find((view) => view.utype === "live-role")?.standbys).toEqual([{ uuid: "s", address: "s:1", seenAt: new Date(clock.now()).toISOString() }]);
      });
    });

    describe("priorities (docs/protocol.md#priorities-and-preemption)", () => {
      const I = TIMING.intervalMs;
      const countedOver = (store: LeaseStore, clock: FakeClock, preemptions: string[] = []): [LeaseService, CountingStore] => {
        const counted = new CountingStore(store);
        const metrics = { heartbeat: () => undefined, release: () => undefined, preemption: (utype: string) => void preemptions.push(utype) };
        return [new LeaseService({ epochClock: COUNTER_ONLY, store: counted, clock, monotonic: clock, timing: TIMING, tokens: new LeaseTokenSigner(SECRET), storeTimeoutMs: 10_000, metrics }), counted];
      };

      it("gives an expired role to the highest standby seen within T: a lower one is refused (held, nothing written) until I after the expiry, then anyone may", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const [service, counted] = countedOver(store, clock);
        const utype = "ranked-failover";
        await service.heartbeat({ utype, uuid: "a" });
        expect((await service.heartbeat({ utype, uuid: "high", priority: 1, announce: true })).outcome).toBe("held");
        expect((await service.heartbeat({ utype, uuid: "low", announce: true })).outcome).toBe("held");
        // The holder dies; the standbys announce again within T of the role becoming free.
        await clock.advance(T - 100);
        await service.heartbeat({ utype, uuid: "high", priority: 1, announce: true });
        await service.heartbeat({ utype, uuid: "low", announce: true });
        await clock.advance(101);
        counted.reset();
        const refused = await service.heartbeat({ utype, uuid: "low" });
        expect(refused).toMatchObject({ outcome: "held", view: { primary: null, epoch: 1 } });
        // A read of the entry and one of the role's standbys; nothing written.
        expect(counted.calls).toEqual(["read", "readStandbys"]);
        const taken = await service.heartbeat({ utype, uuid: "high", priority: 1, address: "head-1:1" });
        expect(taken).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "high", epoch: 2, priority: 1 } } });

        // The same again, but the high one never comes: the low one takes the role I after it became free.
        const other = "ranked-failover-2";
        await service.heartbeat({ utype: other, uuid: "a" });
        await service.heartbeat({ utype: other, uuid: "high", priority: 1, announce: true });
        const freeAt = clock.now() + T;
        await clock.advance(T - 1);
        // Both stand by; the high one is slow to take (a lost poll, its hold-back after lost contact).
        await service.heartbeat({ utype: other, uuid: "high", priority: 1, announce: true });
        await service.heartbeat({ utype: other, uuid: "low", announce: true });
        await clock.advance(1 + I - 1);
        expect((await service.heartbeat({ utype: other, uuid: "low" })).outcome).toBe("held");
        await clock.advance(1);
        expect(clock.now()).toBe(freeAt + I);
        expect(await service.heartbeat({ utype: other, uuid: "low" })).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "low", epoch: 2 } } });
      });

      it("ranks a released role from its release, and a reservation for a named standby before any ranking", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const utype = "ranked-release";
        const a = await service.heartbeat({ utype, uuid: "a" });
        await service.heartbeat({ utype, uuid: "high", priority: 2, announce: true });
        await service.heartbeat({ utype, uuid: "low", priority: 1, announce: true });
        await service.release({ utype, uuid: "a", lease: leaseOf(a) });
        await clock.advance(I - 1);
        expect((await service.heartbeat({ utype, uuid: "low", priority: 1 })).outcome).toBe("held");
        await clock.advance(1);
        expect((await service.heartbeat({ utype, uuid: "low", priority: 1 })).outcome).toBe("accepted");
        // An operator hands over to "mid" (priority 0): the reservation is the operator's choice, not outranked.
        await service.heartbeat({ utype, uuid: "mid", announce: true });
        await service.heartbeat({ utype, uuid: "high", priority: 2, announce: true });
        expect((await service.handover(utype, "mid")).outcome).toBe("requested");
        const holder = await service.heartbeat({ utype, uuid: "low", priority: 1 });
        await service.release({ utype, uuid: "low", lease: leaseOf(holder) });
        expect((await service.heartbeat({ utype, uuid: "mid" })).outcome).toBe("accepted");
      });

      it("costs nothing more on a role whose candidates state no priority: a takeover is a read and a write, and the entry is never marked", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const [service, counted] = countedOver(store, clock);
        const utype = "unranked";
        await service.heartbeat({ utype, uuid: "a" });
        await service.heartbeat({ utype, uuid: "b", announce: true, priority: 0 });
        await clock.advance(T + 1);
        counted.reset();
        expect((await service.heartbeat({ utype, uuid: "b" })).outcome).toBe("accepted");
        expect(counted.calls).toEqual(["read", "replace"]);
        const entry = await store.read(utype);
        expect(entry && ("ranked" in entry || "priority" in entry)).toBe(false);
      });

      it("shows priorities: the holder's (fast path included, one write), each standby's; a new priority is written by the slow path", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const [service, counted] = countedOver(store, clock);
        const utype = "shown";
        const first = await service.heartbeat({ utype, uuid: "a", priority: 3 });
        expect(first).toMatchObject({ view: { primary: { priority: 3 } } });
        counted.reset();
        const renewed = await service.heartbeat({ utype, uuid: "a", priority: 3, lease: leaseOf(first) });
        expect(counted.calls).toEqual(["renew"]);
        expect(renewed).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "a", priority: 3 } } });
        await service.heartbeat({ utype, uuid: "s", priority: -2, announce: true, address: "s:1" });
        await service.heartbeat({ utype, uuid: "z", announce: true });
        const view = await service.getPrimary(utype, undefined, { standbys: true });
        expect(view.primary?.priority).toBe(3);
        expect(view.standbys).toEqual([
          { uuid: "s", address: "s:1", seenAt: new Date(WALL_START).toISOString(), priority: -2 },
          { uuid: "z", address: null, seenAt: new Date(WALL_START).toISOString() },
        ]);
        counted.reset();
        const lowered = await service.heartbeat({ utype, uuid: "a", lease: leaseOf(renewed) });
        expect(counted.calls).toEqual(["read", "replace"]);
        expect(lowered.view.primary && "priority" in lowered.view.primary).toBe(false);
        expect((await store.read(utype))?.priority).toBeUndefined();
      });

      it("preempts by a planned handover: the holder's renewal shows it, its proven release reserves the role, the term ends 'preempted', the standby takes over with a new epoch", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const preemptions: string[] = [];
        const [service] = countedOver(store, clock, preemptions);
        const utype = "preempted";
        const a = await service.heartbeat({ utype, uuid: "a", address: "head-2:1" });
        // Without preempt, an announcement of higher priority asks nothing of the holder.
        expect((await service.heartbeat({ utype, uuid: "h", priority: 1, announce: true })).view.handover).toBeNull();
        await clock.advance(100);
        const asked = await service.heartbeat({ utype, uuid: "h", priority: 1, announce: true, preempt: true, address: "head-1:1" });
        expect(asked).toMatchObject({ outcome: "held", view: { primary: { uuid: "a" }, handover: { to: "h", phase: "pending", reason: "preempt" } } });
        expect(preemptions).toEqual([utype]);
        // Asked again: nothing more to write, nothing counted twice.
        await service.heartbeat({ utype, uuid: "h", priority: 1, announce: true, preempt: true });
        expect(preemptions).toEqual([utype]);
        await clock.advance(100);
        const renewal = await service.heartbeat({ utype, uuid: "a", lease: leaseOf(a) });
        expect(renewal).toMatchObject({ outcome: "accepted", view: { handover: { to: "h", phase: "pending", reason: "preempt" } } });
        const released = await service.release({ utype, uuid: "a", lease: leaseOf(renewal) });
        expect(released).toMatchObject({ outcome: "released", view: { primary: null, handover: { to: "h", phase: "reserved", reason: "preempt" } } });
        const taken = await service.heartbeat({ utype, uuid: "h", priority: 1, address: "head-1:1" });
        expect(taken).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "h", epoch: 2, priority: 1 }, handover: null } });
        const history = await service.history(utype, 16);
        expect(history.terms.map((term) => [term.epoch, term.uuid, term.endedBy])).toEqual([
          [2, "h", null],
          [1, "a", "preempted"],
        ]);
      });

      it("never undoes an operator's handover, never preempts an equal or higher holder, and re-points a preemption only to a higher standby", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const preemptions: string[] = [];
        const [service] = countedOver(store, clock, preemptions);
        const utype = "contested";
        await service.heartbeat({ utype, uuid: "a", priority: 1 });
        expect((await service.heartbeat({ utype, uuid: "same", priority: 1, announce: true, preempt: true })).view.handover).toBeNull();
        await service.heartbeat({ utype, uuid: "c", announce: true });
        expect((await service.handover(utype, "c")).outcome).toBe("requested");
        const operators = await service.heartbeat({ utype, uuid: "h", priority: 5, announce: true, preempt: true });
        expect(operators.view.handover).toEqual(expect.objectContaining({ to: "c", phase: "pending" }));
        expect(operators.view.handover && "reason" in operators.view.handover).toBe(false);
        expect(preemptions).toEqual([]);

        const other = "contested-2";
        await service.heartbeat({ utype: other, uuid: "a" });
        const m = await service.heartbeat({ utype: other, uuid: "m", priority: 1, announce: true, preempt: true });
        expect(m.view.handover).toMatchObject({ to: "m", reason: "preempt" });
        const requestedAt = m.view.handover?.requestedAt;
        await clock.advance(200);
        const h = await service.heartbeat({ utype: other, uuid: "h", priority: 2, announce: true, preempt: true });
        // Re-pointed to the higher standby; the holder's deadline still runs from the first request.
        expect(h.view.handover).toMatchObject({ to: "h", reason: "preempt", requestedAt });
        const back = await service.heartbeat({ utype: other, uuid: "m", priority: 1, announce: true, preempt: true });
        expect(back.view.handover).toMatchObject({ to: "h" });
        expect(preemptions).toEqual([other, other]);
      });
    });

    describe("standby rows", () => {
      it("are never deleted by a read; the sweeper deletes those not announced for T, in every role, and keeps the rest", async () => {
        const { store } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const sweeper = new StandbySweeper({ store, clock, monotonic: clock, timing: TIMING, storeTimeoutMs: 10_000 });
        const holders = new Map<string, string>();
        for (const utype of ["sweep-a", "sweep-b"]) holders.set(utype, leaseOf(await service.heartbeat({ utype, uuid: `${utype}-holder` })));
        await service.heartbeat({ utype: "sweep-a", uuid: "old-a", announce: true });
        await service.heartbeat({ utype: "sweep-b", uuid: "old-b", announce: true });
        await clock.advance(2000);
        for (const [utype, lease] of holders) holders.set(utype, leaseOf(await service.heartbeat({ utype, uuid: `${utype}-holder`, lease })));
        await service.heartbeat({ utype: "sweep-a", uuid: "new-a", announce: true });
        await clock.advance(2000);
        for (const [utype, lease] of holders) holders.set(utype, leaseOf(await service.heartbeat({ utype, uuid: `${utype}-holder`, lease })));
        await clock.advance(T - 4000 + 1);
        // old-a and old-b were last seen T + 1 ms ago: out of view, still stored.
        expect((await service.getPrimary("sweep-a", undefined, { standbys: true })).standbys?.map((row) => row.uuid)).toEqual(["new-a"]);
        expect((await service.listPrimaries(undefined, { standbys: true })).map((view) => [view.utype, view.standbys?.map((row) => row.uuid)])).toEqual([
          ["sweep-a", ["new-a"]],
          ["sweep-b", []],
        ]);
        expect((await store.listStandbys()).map((row) => row.uuid).sort()).toEqual(["new-a", "old-a", "old-b"]);
        const report = await sweeper.sweep();
        expect(report.deleted.map((row) => `${row.utype}/${row.uuid}`).sort()).toEqual(["sweep-a/old-a", "sweep-b/old-b"]);
        expect((await store.listStandbys()).map((row) => row.uuid)).toEqual(["new-a"]);
      });
    });

    describe("an entry deleted behind the service", () => {
      it("is not granted again at a lower epoch, nor before the deleted term could have run out", async () => {
        const { store, deleteEntry } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const warnings: string[] = [];
        const service = serviceOver(store, clock, (message) => warnings.push(message));
        const utype = "deleted-row";
        // Epoch 1 released, epoch 2 run out and taken over: c holds epoch 3.
        const a = await service.heartbeat({ utype, uuid: "a" });
        await service.release({ utype, uuid: "a", lease: leaseOf(a) });
        await service.heartbeat({ utype, uuid: "b" });
        await clock.advance(T + 1);
        const c = await service.heartbeat({ utype, uuid: "c" });
        expect(c.view.primary).toMatchObject({ uuid: "c", epoch: 3 });
        await clock.advance(1000);

        await deleteEntry(utype);
        const deletedAt = clock.now();
        const standby = await service.heartbeat({ utype, uuid: "d" });
        expect(standby.outcome).toBe("held");
        expect(standby.view.primary).toMatchObject({ ...FENCE(2), revoked: true, expiresInMs: T });
        expect(warnings).toEqual([expect.stringMatching(/role deleted-row is fenced: its entry was missing although its history records terms: it was deleted behind the service.*next term's epoch is 4/)]);
        // The deleted term's holder is refused at its next renewal, so it demotes at once: its
        // token names the fence's epoch for another uuid, a term the entry never handed out.
        const holder = await service.heartbeat({ utype, uuid: "c", lease: leaseOf(c) });
        expect(holder.outcome).toBe("revoked");

        await clock.advance(T);
        expect((await service.heartbeat({ utype, uuid: "d" })).outcome).toBe("held");
        await clock.advance(1);
        const taken = await service.heartbeat({ utype, uuid: "d" });
        expect(taken.outcome).toBe("accepted");
        // Above the deleted term's (3): the history, written in one transaction with each entry write, has no gap.
        expect(taken.view.primary).toMatchObject({ uuid: "d", epoch: 4 });
        expect(FENCE(2).epoch).toBe(3);
        expect(clock.now() - deletedAt).toBe(T + 1);
        // The fence's term is in the history as what it was: an unknown holder, revoked.
        const history = await service.history(utype, 16);
        expect(history.terms.map((term) => [term.epoch, term.uuid, term.endedBy])).toEqual([
          [FENCE(2).epoch + 1, "d", null],
          [FENCE(2).epoch, FENCE(2).uuid, "revoked"],
          [2, "b", "taken-over"],
          [1, "a", "released"],
        ]);
      });

      it("in a role's first term (epoch 1, nothing ended yet) too: the history marks the role's creation", async () => {
        const { store, deleteEntry } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const utype = "first-term";
        const a = await service.heartbeat({ utype, uuid: "a" });
        expect(a.view.primary).toMatchObject({ uuid: "a", epoch: 1 });
        await deleteEntry(utype);
        await clock.advance(100);
        // The mark came with the entry, in one transaction: the entry was deleted, not still on its way.
        expect(await service.heartbeat({ utype, uuid: "b" })).toMatchObject({ outcome: "held", view: { primary: FENCE(0) } });
        expect(FENCE(0).epoch).toBe(1);
        expect((await service.heartbeat({ utype, uuid: "a", lease: leaseOf(a) })).outcome).toBe("revoked");
        await clock.advance(T + 1);
        expect((await service.heartbeat({ utype, uuid: "b" })).view.primary).toMatchObject({ uuid: "b", epoch: FENCE(0).epoch + 1 });
        // The marking row is not a term: the history shows only real ones (the fence's, b's).
        expect((await service.history(utype, 16)).terms.map((term) => term.epoch)).toEqual([FENCE(0).epoch + 1, FENCE(0).epoch]);
      });

      it("the fence keeps the ended uuids the history records: a holder whose expired term a DELETE cleared never takes the fence over under its old uuid", async () => {
        const { store, deleteEntry } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const utype = "fence-ended";
        // a's lease runs out (it rides through an outage, say), and a DELETE without its token clears it: a's term ended.
        const a = await service.heartbeat({ utype, uuid: "a" });
        await clock.advance(T + 1);
        expect((await service.release({ utype, uuid: "a" })).outcome).toBe("released");
        await deleteEntry(utype);
        await clock.advance(100);
        // b finds the entry missing: the fence stands for T.
        expect((await service.heartbeat({ utype, uuid: "b" })).outcome).toBe("held");
        await clock.advance(T + 1);
        // a comes back with its token, below the fence's epoch: refused, its term ended (the fence remembers it).
        expect((await service.heartbeat({ utype, uuid: "a", lease: leaseOf(a) })).outcome).toBe("revoked");
        expect((await service.heartbeat({ utype, uuid: "a" })).outcome).toBe("revoked");
        expect((await service.heartbeat({ utype, uuid: "b" })).view.primary).toMatchObject({ uuid: "b" });
      });

      it("a DELETE finding it missing also fences the role instead of opening it at epoch 1", async () => {
        const { store, deleteEntry } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const utype = "deleted-then-delete";
        await service.heartbeat({ utype, uuid: "a" });
        await deleteEntry(utype);
        expect((await service.release({ utype, uuid: "x" })).outcome).toBe("held");
        expect((await service.heartbeat({ utype, uuid: "b" })).outcome).toBe("held");
        await clock.advance(T + 1);
        expect((await service.heartbeat({ utype, uuid: "b" })).view.primary).toMatchObject({ uuid: "b", epoch: FENCE(0).epoch + 1 });
      });

      it("with a history an earlier version wrote (no transactional mark on its newest row, so perhaps gaps above it), the fence keeps the margin of 8; rows this version writes after it bring the margin back to 1", async () => {
        const { store, deleteEntry, writeLegacyTerm } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const warnings: string[] = [];
        const service = serviceOver(store, clock, (message) => warnings.push(message));
        const utype = "legacy-history";
        // An earlier version's rows: a released epoch 1, a taken-over epoch 2; c holds epoch 3.
        await writeLegacyTerm({ utype, epoch: 1, uuid: "a", address: null, startedAt: WALL_START - 9000, endedAt: WALL_START - 8000, endedBy: "released" });
        await writeLegacyTerm({ utype, epoch: 2, uuid: "b", address: null, startedAt: WALL_START - 7000, endedAt: WALL_START - 2000, endedBy: "taken-over" });
        await store.create({ utype, uuid: "c", address: null, epoch: 3, renewedAt: WALL_START, startedAt: WALL_START, revoked: false, endedUuids: ["a", "b"] });
        await deleteEntry(utype);
        expect(await service.heartbeat({ utype, uuid: "d" })).toMatchObject({ outcome: "held", view: { primary: { ...LEGACY_FENCE(2), revoked: true } } });
        expect(warnings).toEqual([expect.stringMatching(/next term's epoch is 11/)]);
        await clock.advance(T + 1);
        expect((await service.heartbeat({ utype, uuid: "d" })).view.primary).toMatchObject({ uuid: "d", epoch: 11 });
        // The takeover wrote the fence's row (epoch 10) in its transaction: the newest row is this version's.
        await deleteEntry(utype);
        expect(await service.heartbeat({ utype, uuid: "e" })).toMatchObject({ outcome: "held", view: { primary: { ...FENCE(10), revoked: true } } });
        expect(FENCE(10).epoch).toBe(11);
        await clock.advance(T + 1);
        expect((await service.heartbeat({ utype, uuid: "e" })).view.primary).toMatchObject({ uuid: "e", epoch: 12 });
      });

      it("leaves the hot path as it was: a renewal is one store call, a takeover a read and one write (the entry and its history row in one transaction)", async () => {
        const { store: inner } = await target.createStore();
        const store = new CountingStore(inner);
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const a = await service.heartbeat({ utype: "hot", uuid: "a" });
        store.reset();
        await clock.advance(1000);
        expect((await service.heartbeat({ utype: "hot", uuid: "a", lease: leaseOf(a) })).outcome).toBe("accepted");
        expect(store.calls).toEqual(["renew"]);
        await clock.advance(T + 1);
        store.reset();
        expect((await service.heartbeat({ utype: "hot", uuid: "b" })).outcome).toBe("accepted");
        expect(store.calls).toEqual(["read", "replace"]);
        // The ended term was written by that replace: no gap.
        expect((await service.history("hot", 16)).terms.map((shown) => [shown.epoch, shown.uuid, shown.endedBy])).toEqual([
          [2, "b", null],
          [1, "a", "taken-over"],
        ]);
      });
    });

    describe("writes that race", () => {
      it("a DELETE without a token racing the same uuid's acquire (a takeover of a released role): the acquire lands first, and the DELETE reads again and revokes it, never 409 Conflict", async () => {
        const { store: inner } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const other = serviceOver(inner, clock);
        const utype = "acquire-vs-delete";
        await other.release({ utype, uuid: "before", lease: leaseOf(await other.heartbeat({ utype, uuid: "before" })) });
        // The DELETE read the released entry; its retire is about to be written when the acquire lands.
        const store = interleaved(inner, "replace", (lease) => (lease as LeaseState).uuid === "", () => other.heartbeat({ utype, uuid: "u" }));
        const service = serviceOver(store, clock);
        const released = await service.release({ utype, uuid: "u" });
        expect(released.outcome).toBe("revoked");
        expect(released.view.primary).toMatchObject({ uuid: "u", epoch: 2, revoked: true });
        // Nobody is behind u, and u can never renew: its lease runs out on its own.
        expect((await service.heartbeat({ utype, uuid: "u" })).outcome).toBe("revoked");
        expect((await service.getPrimary(utype)).primary).toMatchObject({ uuid: "u", revoked: true });
      });

      /** After the race: no lease left live and unrevoked under `uuid`, which nobody is behind, and `uuid` can never renew. */
      const expectNothingLiveFor = async (service: LeaseService, utype: string, uuid: string): Promise<void> => {
        const { primary } = await service.getPrimary(utype);
        if (primary !== null) expect(primary.revoked).toBe(true);
        expect(["revoked", "held"]).toContain((await service.heartbeat({ utype, uuid })).outcome);
      };

      it("on a role never held, a DELETE without a token racing the same uuid's acquire (the two creates) leaves no live lease under that uuid", async () => {
        const { store: inner } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const other = serviceOver(inner, clock);
        const utype = "create-vs-delete";
        // The DELETE read no entry and marked the role's creation; its retire-create is about to be written.
        const store = interleaved(inner, "create", (lease) => (lease as LeaseState).uuid === "", () => other.heartbeat({ utype, uuid: "u" }));
        const released = await serviceOver(store, clock).release({ utype, uuid: "u" });
        expect(released.outcome).not.toBe("conflict");
        await expectNothingLiveFor(other, utype, "u");
      });

      it.each([
        ["the creator's own uuid (a revoke)", "a", "revoked", { uuid: "a", epoch: 1, revoked: true }],
        ["another uuid (a retire)", "x", "held", { uuid: "a", epoch: 1, revoked: false }],
      ])("a DELETE of %s landing right after a role's very first creation mark neither fences the role nor moves its epoch past 1", async (_name, deleted, outcome, primary) => {
        const { store: inner } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const warnings: string[] = [];
        const other = serviceOver(inner, clock, (message) => warnings.push(message));
        const utype = "first-vs-delete";
        let released: Awaited<ReturnType<LeaseService["release"]>> | undefined;
        const store = afterCreationMark(inner, async () => (released = await other.release({ utype, uuid: deleted })));
        const first = await serviceOver(store, clock).heartbeat({ utype, uuid: "a" });
        expect(first).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "a", epoch: 1 } } });
        expect(released).toMatchObject({ outcome, view: { primary } });
        expect(warnings).toEqual([]);
        expect((await other.getPrimary(utype)).primary).toMatchObject(primary);
        // The role is a's first term as any other: the next holder's epoch is 2.
        await clock.advance(T + 1);
        expect((await other.heartbeat({ utype, uuid: "b" })).view.primary).toMatchObject({ uuid: "b", epoch: 2 });
      });

      it("a first creation decided on a read that found nothing, landing after another request created the role and its entry was deleted, never starts epoch 1 again", async () => {
        const { store: inner, deleteEntry } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const other = serviceOver(inner, clock);
        for (const [utype, write] of [
          ["stale-acquire", (service: LeaseService) => service.heartbeat({ utype: "stale-acquire", uuid: "stale" })],
          ["stale-retire", (service: LeaseService) => service.release({ utype: "stale-retire", uuid: "stale" })],
        ] as const) {
          // Between the stale request's reads (no entry, no history) and its create: "first" is elected at epoch 1, and its entry deleted.
          const store = interleaved(inner, "create", (lease) => (lease as LeaseState).utype === utype && (lease as LeaseState).uuid !== "first", async () => {
            expect((await other.heartbeat({ utype, uuid: "first" })).view.primary).toMatchObject({ uuid: "first", epoch: 1 });
            await deleteEntry(utype);
          });
          const stale = await write(serviceOver(store, clock));
          // The heartbeat loses the create and is answered Conflict; the DELETE reads again and finds the role fenced.
          expect(stale.outcome).toBe(utype === "stale-acquire" ? "conflict" : "held");
          const { primary } = await other.getPrimary(utype);
          if (primary !== null) expect(primary).toMatchObject({ ...FENCE(0), revoked: true });
          expect(await other.heartbeat({ utype, uuid: "next" })).toMatchObject({ outcome: "held", view: { primary: { ...FENCE(0), revoked: true } } });
        }
        await clock.advance(T + 1);
        for (const utype of ["stale-acquire", "stale-retire"]) expect((await other.heartbeat({ utype, uuid: "next" })).view.primary).toMatchObject({ uuid: "next", epoch: 2 });
      });

      it("an acquire racing its own uuid's DELETE: the retire lands first and the acquire is refused as ended", async () => {
        const { store: inner } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const other = serviceOver(inner, clock);
        const utype = "delete-vs-acquire";
        const store = interleaved(inner, "create", (lease) => (lease as LeaseState).uuid === "u", () => other.release({ utype, uuid: "u" }));
        const acquired = await serviceOver(store, clock).heartbeat({ utype, uuid: "u" });
        expect(acquired.outcome).toBe("revoked");
        await expectNothingLiveFor(other, utype, "u");
      });

      it("a holder's renewal racing another uuid's DELETE (a retire, which changes the entry's ETag but not its term) is accepted, never 409 Conflict", async () => {
        const { store: inner } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const other = serviceOver(inner, clock);
        const utype = "renew-vs-retire";
        const first = await other.heartbeat({ utype, uuid: "holder" });
        // One retire makes the token stale (slow path); a second lands between its read and its write.
        await other.release({ utype, uuid: "intruder-1" });
        await clock.advance(1000);
        const store = interleaved(inner, "replace", () => true, () => other.release({ utype, uuid: "intruder-2" }));
        const renewed = await serviceOver(store, clock).heartbeat({ utype, uuid: "holder", lease: leaseOf(first) });
        expect(renewed.outcome).toBe("accepted");
        expect(renewed.view.primary).toMatchObject({ uuid: "holder", epoch: 1, expiresInMs: T });
        // Its new token is good for the fast path.
        expect((await other.heartbeat({ utype, uuid: "holder", lease: leaseOf(renewed) })).outcome).toBe("accepted");
      });

      it("two first heartbeats a store call apart: one creates the entry with its mark, the other loses the create race and is answered Conflict showing it; nothing is fenced", async () => {
        const { store: inner } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const warnings: string[] = [];
        const other = serviceOver(inner, clock, (message) => warnings.push(message));
        const utype = "first-two";
        let second: HeartbeatResult | undefined;
        // The first read no entry and no history; its create is about to be written when the second arrives.
        const store = interleaved(inner, "create", () => true, async () => (second = await other.heartbeat({ utype, uuid: "second" })));
        const first = await serviceOver(store, clock, (message) => warnings.push(message)).heartbeat({ utype, uuid: "first" });
        expect(second).toMatchObject({ outcome: "accepted", view: { primary: { uuid: "second", epoch: 1 } } });
        expect(first).toMatchObject({ outcome: "conflict", view: { primary: { uuid: "second", epoch: 1, revoked: false } } });
        expect(warnings).toEqual([]);
        expect((await inner.readTerms(utype)).map((row) => [row.epoch, row.uuid])).toEqual([[0, "second"]]);
      });

      it("a creation mark an earlier version wrote (before its entry), younger than a request's budget: a heartbeat writes nothing and is answered Conflict, a DELETE fences the role", async () => {
        const { store, writeLegacyTerm } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const service = serviceOver(store, clock);
        const utype = "legacy-creating";
        // The earlier version's creator has marked the role; its create may still be on its way.
        await writeLegacyTerm({ utype, epoch: 0, uuid: "creator", address: null, startedAt: WALL_START, endedAt: WALL_START, endedBy: "released" });
        await clock.advance(100);
        expect(await service.heartbeat({ utype, uuid: "b" })).toMatchObject({ outcome: "conflict", view: { primary: null } });
        expect(await store.read(utype)).toBeUndefined();
        expect(await service.release({ utype, uuid: "creator" })).toMatchObject({ outcome: "held", view: { primary: { ...LEGACY_FENCE(0), revoked: true } } });
      });

      it("a creation mark an earlier version wrote, older than a request's budget, with no entry is a deleted (or never written) first entry: fenced with the margin of 8", async () => {
        const { store, writeLegacyTerm } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const utype = "mark-only";
        await writeLegacyTerm({ utype, epoch: 0, uuid: "creator", address: null, startedAt: WALL_START, endedAt: WALL_START, endedBy: "released" });
        await clock.advance(10_001);
        expect(await serviceOver(store, clock).heartbeat({ utype, uuid: "b" })).toMatchObject({ outcome: "held", view: { primary: { ...LEGACY_FENCE(0), revoked: true } } });
      });

      it("deciding again is bounded: a renewal whose every write loses to another retire is answered 409 Conflict after 4 decisions", async () => {
        const { store: inner } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const other = serviceOver(inner, clock);
        const utype = "renew-vs-retire-storm";
        await other.heartbeat({ utype, uuid: "holder" });
        await clock.advance(1000);
        let retires = 0;
        const storm: LeaseStore = {
          kind: inner.kind,
          read: (...args) => inner.read(...args),
          create: (...args) => inner.create(...args),
          renew: (...args) => inner.renew(...args),
          list: (...args) => inner.list(...args),
          ping: (...args) => inner.ping(...args),
          readTerms: (...args) => inner.readTerms(...args),
          upsertStandby: (...args) => inner.upsertStandby(...args),
          readStandbys: (...args) => inner.readStandbys(...args),
          listStandbys: (...args) => inner.listStandbys(...args),
          deleteStandby: (...args) => inner.deleteStandby(...args),
          replace: async (...args) => {
            retires += 1;
            await other.release({ utype, uuid: `intruder-${retires}` });
            return inner.replace(...args);
          },
        };
        const lost = await serviceOver(storm, clock).heartbeat({ utype, uuid: "holder" });
        expect(lost.outcome).toBe("conflict");
        expect(lost.view.primary).toMatchObject({ uuid: "holder", epoch: 1 });
        expect(retires).toBe(4);
      });

      it("a takeover that loses to a change of term is still refused: deciding again never overrules another holder", async () => {
        const { store: inner } = await target.createStore();
        const clock = new FakeClock(WALL_START);
        const other = serviceOver(inner, clock);
        const utype = "takeover-vs-takeover";
        await other.heartbeat({ utype, uuid: "old" });
        await clock.advance(T + 1);
        const store = interleaved(inner, "replace", () => true, () => other.heartbeat({ utype, uuid: "winner" }));
        const lost = await serviceOver(store, clock).heartbeat({ utype, uuid: "loser" });
        expect(lost.outcome).toBe("conflict");
        expect((await other.getPrimary(utype)).primary).toMatchObject({ uuid: "winner", epoch: 2 });
      });
    });
  });
}
