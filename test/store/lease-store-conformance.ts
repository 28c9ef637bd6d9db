import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LeaseState } from "../../shared/lease/lease.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import type { TokenSecretStore } from "../../shared/service/token-keys.js";
import type { TermRecord } from "../../shared/lease/term-record.js";
import { TERM_HISTORY_SLOTS } from "../../shared/contract/term-history.js";

export interface ConformanceTarget {
  /** A store over empty storage; called once per test. */
  createStore(): Promise<LeaseStore>;
  /** Stops whatever `setUp` started. */
  tearDown?(): Promise<void>;
  setUp?(): Promise<void>;
  /**
   * An address the store refuses in a history row (too large for it), so that the row's
   * operation fails after the entry's in one transaction. Only for a store whose
   * transactions can be shown all-or-nothing here: not the memory store (it refuses no row;
   * it writes both with no await between), nor the test Cosmos emulator (it does not make
   * a batch atomic).
   */
  readonly unwritableAddress?: string;
}

const lease = (overrides: Partial<LeaseState> = {}): LeaseState => ({
  utype: "scheduler",
  uuid: "holder-1",
  address: "10.0.0.4:5800",
  epoch: 1,
  renewedAt: 1_763_632_800_123,
  revoked: false,
  endedUuids: [],
  ...overrides,
});

const term = (overrides: Partial<TermRecord> = {}): TermRecord => ({
  utype: "scheduler",
  epoch: 3,
  uuid: "holder-3",
  address: "10.0.0.4:5800",
  startedAt: 1_763_632_700_000,
  endedAt: 1_763_632_800_123,
  endedBy: "taken-over",
  ...overrides,
});

const byEpoch = (terms: TermRecord[]): TermRecord[] => [...terms].sort((a, b) => a.epoch - b.epoch);

const fieldsOf = ({ utype, uuid, address, epoch, renewedAt, revoked, endedUuids }: LeaseState): LeaseState => ({
  utype,
  uuid,
  address,
  epoch,
  renewedAt,
  revoked,
  endedUuids,
});

/**
 * The contract every LeaseStore keeps, run unchanged against each store (memory, Azurite,
 * the Cosmos emulator). Lost races are typed outcomes; every write names its ETag.
 */
export function describeLeaseStoreConformance(name: string, target: ConformanceTarget): void {
  describe(`LeaseStore conformance: ${name}`, () => {
    let store: LeaseStore;
    beforeAll(async () => target.setUp?.());
    afterAll(async () => target.tearDown?.());
    const fresh = async (): Promise<LeaseStore> => {
      store = await target.createStore();
      return store;
    };

    it("reads nothing for a utype never written", async () => {
      await fresh();
      expect(await store.read("scheduler")).toBeUndefined();
    });

    it("creates an entry and reads back every field with an ETag", async () => {
      await fresh();
      const created = await store.create(lease());
      expect(created.ok).toBe(true);
      const read = await store.read("scheduler");
      expect(read && fieldsOf(read)).toEqual(lease());
      expect(read?.etag).toBe(created.ok ? created.etag : "unreachable");
    });

    it("round-trips a null address, a released holder and a large epoch", async () => {
      await fresh();
      const released = lease({ uuid: "", address: null, epoch: 2 ** 40, renewedAt: 1 });
      await store.create(released);
      const read = await store.read("scheduler");
      expect(read && fieldsOf(read)).toEqual(released);
    });

    it("round-trips a revoked holder and a full list of ended uuids, and an epoch-0 placeholder", async () => {
      await fresh();
      const endedUuids = Array.from({ length: 8 }, (_, i) => `${"u".repeat(120)}-${i}`);
      const revoked = lease({ revoked: true, endedUuids });
      const created = await store.create(revoked);
      if (!created.ok) throw new Error("create failed");
      expect((await store.read("scheduler")) && fieldsOf((await store.read("scheduler"))!)).toEqual(revoked);
      const placeholder = lease({ uuid: "", address: null, epoch: 0, endedUuids: ["stopping"] });
      expect((await store.replace(placeholder, created.etag)).ok).toBe(true);
      const read = await store.read("scheduler");
      expect(read && fieldsOf(read)).toEqual(placeholder);
      expect((await store.list()).map(fieldsOf)).toEqual([placeholder]);
    });

    it("refuses a second create for the same utype as a typed outcome, keeping the first", async () => {
      await fresh();
      await store.create(lease());
      const second = await store.create(lease({ uuid: "holder-2", epoch: 7 }));
      expect(second).toEqual({ ok: false, reason: "exists" });
      expect((await store.read("scheduler"))?.uuid).toBe("holder-1");
    });

    it("keeps utypes independent", async () => {
      await fresh();
      await store.create(lease({ utype: "scheduler" }));
      await store.create(lease({ utype: "broker.v2:eu-1_a", uuid: "holder-9", epoch: 4 }));
      expect((await store.read("scheduler"))?.uuid).toBe("holder-1");
      expect((await store.read("broker.v2:eu-1_a"))?.epoch).toBe(4);
      const listed = await store.list();
      expect(listed.map((entry) => entry.utype).sort()).toEqual(["broker.v2:eu-1_a", "scheduler"]);
    });

    it("replaces the whole entry when the ETag matches, with a new ETag", async () => {
      await fresh();
      const created = await store.create(lease());
      if (!created.ok) throw new Error("create failed");
      const next = lease({ uuid: "holder-2", address: null, epoch: 2, renewedAt: 1_763_632_900_000 });
      const replaced = await store.replace(next, created.etag);
      expect(replaced.ok).toBe(true);
      if (!replaced.ok) return;
      expect(replaced.etag).not.toBe(created.etag);
      const read = await store.read("scheduler");
      expect(read && fieldsOf(read)).toEqual(next);
      expect(read?.etag).toBe(replaced.etag);
    });

    it("refuses a replace with a stale ETag and changes nothing", async () => {
      await fresh();
      const created = await store.create(lease());
      if (!created.ok) throw new Error("create failed");
      const first = await store.replace(lease({ renewedAt: 2_000_000_000_000 }), created.etag);
      expect(first.ok).toBe(true);
      const stale = await store.replace(lease({ uuid: "thief", epoch: 99 }), created.etag);
      expect(stale).toEqual({ ok: false, reason: "changed" });
      const read = await store.read("scheduler");
      expect(read?.uuid).toBe("holder-1");
      expect(read?.epoch).toBe(1);
    });

    it("renews renewedAt and address only, keeping holder, epoch, revoked and the ended list", async () => {
      await fresh();
      const created = await store.create(lease({ epoch: 5, endedUuids: ["gone"] }));
      if (!created.ok) throw new Error("create failed");
      const renewed = await store.renew("scheduler", { renewedAt: 1_763_632_805_000, address: null }, created.etag);
      expect(renewed.ok).toBe(true);
      const read = await store.read("scheduler");
      expect(read && fieldsOf(read)).toEqual(lease({ epoch: 5, renewedAt: 1_763_632_805_000, address: null, endedUuids: ["gone"] }));
      expect(read?.etag).toBe(renewed.ok ? renewed.etag : "unreachable");
      expect(read?.etag).not.toBe(created.etag);
    });

    it("renews without an address: the stored address stays", async () => {
      await fresh();
      const created = await store.create(lease({ address: "10.0.0.4:5800" }));
      if (!created.ok) throw new Error("create failed");
      const renewed = await store.renew("scheduler", { renewedAt: 1_763_632_806_000 }, created.etag);
      expect(renewed.ok).toBe(true);
      const read = await store.read("scheduler");
      expect(read && fieldsOf(read)).toEqual(lease({ address: "10.0.0.4:5800", renewedAt: 1_763_632_806_000 }));
    });

    it("refuses a renewal with a stale ETag and changes nothing", async () => {
      await fresh();
      const created = await store.create(lease());
      if (!created.ok) throw new Error("create failed");
      await store.renew("scheduler", { renewedAt: 1_763_632_801_000, address: "a" }, created.etag);
      const stale = await store.renew("scheduler", { renewedAt: 1_763_632_999_000, address: "b" }, created.etag);
      expect(stale).toEqual({ ok: false, reason: "changed" });
      const read = await store.read("scheduler");
      expect(read?.renewedAt).toBe(1_763_632_801_000);
      expect(read?.address).toBe("a");
    });

    it("answers a conditional write to a missing entry as a typed outcome", async () => {
      await fresh();
      expect(await store.renew("ghost", { renewedAt: 1, address: null }, 'W/"1"')).toEqual({ ok: false, reason: "missing" });
      expect(await store.replace(lease({ utype: "ghost" }), 'W/"1"')).toEqual({ ok: false, reason: "missing" });
      expect(await store.read("ghost")).toBeUndefined();
    });

    it("lets exactly one of many concurrent creates win", async () => {
      await fresh();
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.create(lease({ uuid: `racer-${i}` }))),
      );
      expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(1);
      expect(outcomes.filter((outcome) => !outcome.ok && outcome.reason === "exists")).toHaveLength(9);
    });

    it("lets exactly one of many concurrent replaces on one ETag win", async () => {
      await fresh();
      const created = await store.create(lease());
      if (!created.ok) throw new Error("create failed");
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.replace(lease({ uuid: `racer-${i}`, epoch: 2 }), created.etag)),
      );
      const winners = outcomes.filter((outcome) => outcome.ok);
      expect(winners).toHaveLength(1);
      const read = await store.read("scheduler");
      expect(read?.etag).toBe(winners[0]?.ok ? winners[0].etag : "unreachable");
    });

    it("lists every entry with its ETag, and nothing on empty storage", async () => {
      await fresh();
      expect(await store.list()).toEqual([]);
      const created = await store.create(lease());
      const listed = await store.list();
      expect(listed).toHaveLength(1);
      expect(listed[0]?.etag).toBe(created.ok ? created.etag : "unreachable");
    });

    it("keeps a term's start through renewals and replaces, and reads an entry without one as without one", async () => {
      await fresh();
      const created = await store.create(lease({ startedAt: 1_763_632_700_001 }));
      if (!created.ok) throw new Error("create failed");
      const renewed = await store.renew("scheduler", { renewedAt: 1_763_632_805_000 }, created.etag);
      if (!renewed.ok) throw new Error("renew failed");
      expect((await store.read("scheduler"))?.startedAt).toBe(1_763_632_700_001);
      await store.replace(lease({ epoch: 2, uuid: "holder-2", startedAt: 1_763_632_900_000 }), renewed.etag);
      expect((await store.read("scheduler"))?.startedAt).toBe(1_763_632_900_000);
      await store.create(lease({ utype: "legacy" }));
      expect((await store.read("legacy"))?.startedAt).toBeUndefined();
    });

    it("reads no terms for a role that has none", async () => {
      await fresh();
      expect(await store.readTerms("scheduler")).toEqual([]);
    });

    it("records terms and reads back every field, a null address, a large epoch and the transactional mark included (absent stays absent), per role", async () => {
      await fresh();
      const recorded = [
        term({ epoch: 0, uuid: "creator", address: null, endedBy: "released", transactional: true }),
        term(),
        term({ epoch: 4, uuid: "holder-4", address: null, endedBy: "released", transactional: true }),
        term({ epoch: 2 ** 40 + 7, endedBy: "revoked", transactional: false }),
      ];
      let written = await store.create(lease(), undefined, { creationMark: recorded[0] });
      for (const endedTerm of recorded.slice(1)) {
        if (!written.ok) throw new Error("a write failed");
        written = await store.replace(lease(), written.etag, undefined, { endedTerm });
      }
      await store.create(lease({ utype: "broker.v2:eu-1_a" }), undefined, { term: term({ utype: "broker.v2:eu-1_a", uuid: "other" }) });
      expect(byEpoch(await store.readTerms("scheduler"))).toEqual(byEpoch(recorded));
      expect(await store.readTerms("broker.v2:eu-1_a")).toEqual([term({ utype: "broker.v2:eu-1_a", uuid: "other" })]);
      // The lease entries are what list() shows; term rows never pass for leases.
      expect((await store.list()).map((entry) => entry.utype).sort()).toEqual(["broker.v2:eu-1_a", "scheduler"]);
      expect((await store.read("scheduler"))?.uuid).toBe("holder-1");
    });

    it("keeps a ring of TERM_HISTORY_SLOTS rows per role: a term replaces the one N epochs older in its slot", async () => {
      await fresh();
      let written = await store.create(lease());
      const record = async (endedTerm: TermRecord): Promise<void> => {
        if (!written.ok) throw new Error("a write failed");
        written = await store.replace(lease(), written.etag, undefined, { endedTerm });
      };
      for (let epoch = 1; epoch <= TERM_HISTORY_SLOTS + 2; epoch++) await record(term({ epoch, uuid: `holder-${epoch}` }));
      const terms = byEpoch(await store.readTerms("scheduler"));
      expect(terms.map((one) => one.epoch)).toEqual(Array.from({ length: TERM_HISTORY_SLOTS }, (_, i) => i + 3));
      // Writing the same term again changes nothing: an upsert of the same facts.
      await record(term({ epoch: 5, uuid: "holder-5" }));
      expect(byEpoch(await store.readTerms("scheduler"))).toEqual(terms);
      // The mark of a role's creation (epoch 0) is slot 0's until term 16 replaces it.
      await fresh();
      written = await store.create(lease(), undefined, { creationMark: term({ epoch: 0, uuid: "creator" }) });
      await record(term({ epoch: TERM_HISTORY_SLOTS, uuid: "holder-16" }));
      expect((await store.readTerms("scheduler")).map((one) => one.epoch)).toEqual([TERM_HISTORY_SLOTS]);
    });

    it("writes a create and its history row (a creation mark, a fence's term) in one operation: both land, and the new ETag is the entry's", async () => {
      await fresh();
      const mark = term({ epoch: 0, uuid: "holder-1", address: null, endedBy: "released", transactional: true });
      const created = await store.create(lease(), undefined, { creationMark: mark });
      expect(created).toEqual({ ok: true, etag: expect.any(String) });
      const entry = await store.read("scheduler");
      expect(entry).toMatchObject({ uuid: "holder-1", epoch: 1 });
      expect(created.ok && created.etag).toBe(entry?.etag);
      expect(await store.readTerms("scheduler")).toEqual([mark]);
      expect((await store.renew("scheduler", { renewedAt: 1_763_632_900_000 }, created.ok ? created.etag : "unreachable")).ok).toBe(true);
      // A fence's own term, with the fence.
      const fence = term({ utype: "fenced", epoch: 9, uuid: "ha-module:entry-missing:9", endedBy: "revoked", transactional: true });
      const fenced = await store.create(lease({ utype: "fenced", uuid: fence.uuid, epoch: 9, revoked: true }), undefined, { term: fence });
      expect(fenced.ok && fenced.etag).toBe((await store.read("fenced"))?.etag);
      expect(await store.readTerms("fenced")).toEqual([fence]);
    });

    it.skipIf(target.unwritableAddress === undefined)("writes neither the entry nor the history row when the row cannot be written: a create and a replace are all or nothing", async () => {
      await fresh();
      const refused = term({ epoch: 0, uuid: "holder-1", address: target.unwritableAddress ?? null, transactional: true });
      await expect(store.create(lease(), undefined, { term: refused })).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await store.read("scheduler")).toBeUndefined();
      expect(await store.readTerms("scheduler")).toEqual([]);
      const created = await store.create(lease({ uuid: "holder-3", epoch: 3 }));
      if (!created.ok) throw new Error("create failed");
      await expect(store.replace(lease({ uuid: "holder-4", epoch: 4 }), created.etag, undefined, { endedTerm: { ...refused, epoch: 3, uuid: "holder-3" } })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      expect(await store.read("scheduler")).toMatchObject({ uuid: "holder-3", epoch: 3, etag: created.etag });
      expect(await store.readTerms("scheduler")).toEqual([]);
    });

    // The operation expected to fail comes first in the batch, so these hold on the test
    // Cosmos emulator too, although it does not make a batch atomic (see below).
    it("writes neither the entry nor the history row when the create finds an entry (exists)", async () => {
      await fresh();
      const first = await store.create(lease());
      const fence = term({ epoch: 9, uuid: "ha-module:entry-missing:9", endedBy: "revoked", transactional: true });
      expect(await store.create(lease({ uuid: "ha-module:entry-missing:9", epoch: 9 }), undefined, { term: fence })).toEqual({ ok: false, reason: "exists" });
      expect(await store.read("scheduler")).toMatchObject({ uuid: "holder-1", epoch: 1, etag: first.ok ? first.etag : "unreachable" });
      expect(await store.readTerms("scheduler")).toEqual([]);
    });

    it("a creation mark is inserted, never upserted: a second creation of the role writes nothing, and the first creator's mark stays (exists)", async () => {
      await fresh();
      const mark = term({ epoch: 0, uuid: "first-creator", address: null, endedBy: "released", transactional: true });
      const first = await store.create(lease(), undefined, { creationMark: mark });
      if (!first.ok) throw new Error("create failed");
      const second = await store.create(lease({ uuid: "second-creator" }), undefined, { creationMark: { ...mark, uuid: "second-creator" } });
      expect(second).toEqual({ ok: false, reason: "exists" });
      expect(await store.readTerms("scheduler")).toEqual([mark]);
      expect(await store.read("scheduler")).toMatchObject({ uuid: "holder-1", etag: first.etag });
    });
    it("writes a replace and the term it ends in one operation: both land, and the new ETag is the entry's", async () => {
      await fresh();
      const created = await store.create(lease({ uuid: "holder-3", epoch: 3 }));
      if (!created.ok) throw new Error("create failed");
      const ended = term({ epoch: 3, uuid: "holder-3", endedBy: "taken-over" });
      const replaced = await store.replace(lease({ uuid: "holder-4", epoch: 4 }), created.etag, undefined, { endedTerm: ended });
      expect(replaced).toEqual({ ok: true, etag: expect.any(String) });
      const entry = await store.read("scheduler");
      expect(entry).toMatchObject({ uuid: "holder-4", epoch: 4 });
      expect(replaced.ok && replaced.etag).toBe(entry?.etag);
      expect(await store.readTerms("scheduler")).toEqual([ended]);
      // The ETag answered is the one the next conditional write needs.
      expect((await store.renew("scheduler", { renewedAt: 1_763_632_900_000 }, replaced.ok ? replaced.etag : "unreachable")).ok).toBe(true);
    });

    // The test Cosmos emulator (@vercel/cosmosdb-server) does not make a batch atomic: it runs
    // the operations in order and stops at the first that fails, keeping what ran before. So
    // on it this proves only that a failed If-Match (the entry's replace comes first) writes
    // nothing and is answered "changed"; the all-or-nothing of a batch whose later operation
    // fails is Cosmos DB's documented guarantee (as an entity-group transaction's is Table
    // Storage's), which the adapter relies on and no emulator here can show.
    it("writes neither the entry nor the term when the replace loses its race (changed) or finds no entry (missing)", async () => {
      await fresh();
      const created = await store.create(lease({ uuid: "holder-3", epoch: 3 }));
      if (!created.ok) throw new Error("create failed");
      const moved = await store.renew("scheduler", { renewedAt: 1_763_632_900_000 }, created.etag);
      expect(moved.ok).toBe(true);
      const ended = term({ epoch: 3, uuid: "holder-3" });
      expect(await store.replace(lease({ uuid: "holder-4", epoch: 4 }), created.etag, undefined, { endedTerm: ended })).toEqual({ ok: false, reason: "changed" });
      expect(await store.read("scheduler")).toMatchObject({ uuid: "holder-3", epoch: 3, etag: moved.ok ? moved.etag : "unreachable" });
      expect(await store.readTerms("scheduler")).toEqual([]);
      const elsewhere = term({ utype: "nobody", epoch: 3 });
      expect(await store.replace(lease({ utype: "nobody", epoch: 4 }), created.etag, undefined, { endedTerm: elsewhere })).toEqual({ ok: false, reason: "missing" });
      expect(await store.read("nobody")).toBeUndefined();
      expect(await store.readTerms("nobody")).toEqual([]);
    });

    it("round-trips a pending handover (to a standby or to any); a replace without it drops it; a renewal keeps it", async () => {
      await fresh();
      const pending = lease({ handover: { to: "standby-2", requestedAt: 1_763_632_800_456 } });
      const created = await store.create(pending);
      const read = await store.read("scheduler");
      expect(read?.handover).toEqual({ to: "standby-2", requestedAt: 1_763_632_800_456 });
      const renewed = await store.renew("scheduler", { renewedAt: 1_763_632_801_000 }, created.ok ? created.etag : "unreachable");
      expect((await store.read("scheduler"))?.handover).toEqual({ to: "standby-2", requestedAt: 1_763_632_800_456 });
      const anyStandby = await store.replace(lease({ handover: { to: null, requestedAt: 7 } }), renewed.ok ? renewed.etag : "unreachable");
      expect((await store.read("scheduler"))?.handover).toEqual({ to: null, requestedAt: 7 });
      await store.replace(lease(), anyStandby.ok ? anyStandby.etag : "unreachable");
      expect((await store.read("scheduler"))?.handover).toBeUndefined();
      expect((await store.list())[0]?.handover).toBeUndefined();
    });

    it("keeps standby rows per role beside the entry: upsert, read, list, delete, never seen as a lease or a term", async () => {
      await fresh();
      const created = await store.create(lease());
      await store.upsertStandby({ utype: "scheduler", uuid: "standby-1", address: "10.0.0.5:5800", seenAt: 1_000 });
      await store.upsertStandby({ utype: "scheduler", uuid: "standby-2", address: null, seenAt: 2_000 });
      await store.upsertStandby({ utype: "broker.v2:eu-1_a", uuid: "standby-3", address: "b:1", seenAt: 3_000 });
      // Its own row written again: the newer announcement replaces it.
      await store.upsertStandby({ utype: "scheduler", uuid: "standby-1", address: "10.0.0.5:5801", seenAt: 4_000 });
      const byUuid = (rows: { uuid: string }[]): unknown[] => [...rows].sort((a, b) => (a.uuid < b.uuid ? -1 : 1));
      expect(byUuid(await store.readStandbys("scheduler"))).toEqual([
        { utype: "scheduler", uuid: "standby-1", address: "10.0.0.5:5801", seenAt: 4_000 },
        { utype: "scheduler", uuid: "standby-2", address: null, seenAt: 2_000 },
      ]);
      expect(byUuid(await store.listStandbys())).toHaveLength(3);
      // Standby rows contend with nothing: the entry's ETag did not move.
      const read = await store.read("scheduler");
      expect(read?.etag).toBe(created.ok ? created.etag : "unreachable");
      expect((await store.list()).map((entry) => entry.utype)).toEqual(["scheduler"]);
      expect(await store.readTerms("scheduler")).toEqual([]);
      await store.deleteStandby("scheduler", "standby-1");
      await store.deleteStandby("scheduler", "never-there");
      expect(await store.readStandbys("scheduler")).toEqual([{ utype: "scheduler", uuid: "standby-2", address: null, seenAt: 2_000 }]);
    });

    it("round-trips priorities (docs/protocol.md#priorities-and-preemption): the holder's, negative too, the ranked mark and a preemption's reason; a renewal keeps them, a replace without them drops them", async () => {
      await fresh();
      const preempting = lease({ priority: -7, ranked: true, handover: { to: "standby-2", requestedAt: 1_763_632_800_456, reason: "preempt" } });
      const created = await store.create(preempting);
      const read = await store.read("scheduler");
      expect(read).toMatchObject({ priority: -7, ranked: true, handover: { to: "standby-2", requestedAt: 1_763_632_800_456, reason: "preempt" } });
      const renewed = await store.renew("scheduler", { renewedAt: 1_763_632_801_000 }, created.ok ? created.etag : "unreachable");
      expect(await store.read("scheduler")).toMatchObject({ priority: -7, ranked: true, handover: { reason: "preempt" } });
      const high = await store.replace(lease({ priority: 1_000_000 }), renewed.ok ? renewed.etag : "unreachable");
      const replaced = await store.read("scheduler");
      expect(replaced?.priority).toBe(1_000_000);
      expect(replaced?.ranked).toBeUndefined();
      expect(replaced?.handover).toBeUndefined();
      await store.replace(lease(), high.ok ? high.etag : "unreachable");
      const plain = await store.read("scheduler");
      // Priority 0 is never stored: an entry of a role without priorities reads as it always did.
      expect(plain && "priority" in plain).toBe(false);
      expect(plain && "ranked" in plain).toBe(false);
      expect((await store.list())[0]?.priority).toBeUndefined();
    });

    it("round-trips a standby's priority, negative too; a newer announcement without one drops it", async () => {
      await fresh();
      await store.upsertStandby({ utype: "scheduler", uuid: "standby-1", address: "a:1", seenAt: 1_000, priority: 5 });
      await store.upsertStandby({ utype: "scheduler", uuid: "standby-2", address: null, seenAt: 2_000, priority: -1_000_000 });
      const byUuid = (rows: { uuid: string }[]): unknown[] => [...rows].sort((a, b) => (a.uuid < b.uuid ? -1 : 1));
      expect(byUuid(await store.readStandbys("scheduler"))).toEqual([
        { utype: "scheduler", uuid: "standby-1", address: "a:1", seenAt: 1_000, priority: 5 },
        { utype: "scheduler", uuid: "standby-2", address: null, seenAt: 2_000, priority: -1_000_000 },
      ]);
      expect(byUuid(await store.listStandbys())).toHaveLength(2);
      await store.upsertStandby({ utype: "scheduler", uuid: "standby-1", address: "a:1", seenAt: 3_000 });
      expect(byUuid(await store.readStandbys("scheduler"))[0]).toEqual({ utype: "scheduler", uuid: "standby-1", address: "a:1", seenAt: 3_000 });
    });

    it("keeps one token secret: the first candidate stored is what every ask answers, and no list shows its row", async () => {
      await fresh();
      const secrets = store as LeaseStore & TokenSecretStore;
      const [one, other, late] = ["one", "other", "late"].map((name) => `${name}-candidate-secret-of-forty-characters`.padEnd(40, "x"));
      // Two instances asking at once over empty storage: both answer the one stored first.
      const [a, b] = await Promise.all([secrets.tokenSecret(one!), secrets.tokenSecret(other!)]);
      expect(a).toBe(b);
      expect([one, other]).toContain(a);
      expect(await secrets.tokenSecret(late!)).toBe(a);
      // Not a role, not a standby: name resolving and the sweeper never see it.
      expect(await store.list()).toEqual([]);
      expect(await store.listStandbys()).toEqual([]);
      await store.create(lease());
      expect((await store.list()).map((entry) => entry.utype)).toEqual(["scheduler"]);
      await expect(secrets.tokenSecret(late!, { abortSignal: AbortSignal.abort() })).rejects.toBeInstanceOf(StoreUnavailableError);
    });

    it("answers ping when reachable", async () => {
      await fresh();
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it("turns an aborted call into StoreUnavailableError", async () => {
      await fresh();
      const abortSignal = AbortSignal.abort();
      await expect(store.read("scheduler", { abortSignal })).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.create(lease(), { abortSignal })).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.create(lease(), { abortSignal }, { term: term({ epoch: 0 }) })).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.readTerms("scheduler", { abortSignal })).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await store.read("scheduler")).toBeUndefined();
      expect(await store.readTerms("scheduler")).toEqual([]);
    });
  });
}
