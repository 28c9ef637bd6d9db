import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import type { GroupSnapshot, MemberStore } from "../../shared/members/member-store.js";
import type { MemberRecord, MemberRow, SweepMarker } from "../../shared/members/member.js";

export interface MemberConformanceTarget {
  setUp?(): Promise<void>;
  tearDown?(): Promise<void>;
  /** A store over empty storage; called once per test. */
  createStore(): Promise<MemberStore>;
}

const row = (overrides: Partial<MemberRow> = {}): MemberRow => ({
  group: "cluster",
  member: "node-1",
  session: "s1",
  address: "10.0.0.4:5800",
  joinedAt: 1_763_632_700_000,
  renewedAt: 1_763_632_800_123,
  heartbeats: 1,
  leftAt: null,
  previous: null,
  endedSessions: [],
  ...overrides,
});

const fieldsOf = ({ etag: _etag, ...fields }: MemberRecord): MemberRow => fields;
const marker = (overrides: Partial<SweepMarker> = {}): SweepMarker => ({ group: "cluster", sweptAt: 1_763_632_800_000, gap: null, removedSessions: [], ...overrides });
const sorted = (snapshot: GroupSnapshot): MemberRow[] => [...snapshot.rows].sort((a, b) => (a.member < b.member ? -1 : 1)).map(fieldsOf);

/**
 * The contract every MemberStore keeps, run unchanged against each store (memory, Azurite,
 * the Cosmos emulator): a group is one partition, read with its sweep marker by one query;
 * lost races are typed outcomes; every update and delete names its ETag.
 */
export function describeMemberStoreConformance(name: string, target: MemberConformanceTarget): void {
  describe(`MemberStore conformance: ${name}`, () => {
    let store: MemberStore;
    beforeAll(async () => target.setUp?.());
    afterAll(async () => target.tearDown?.());
    const fresh = async (): Promise<MemberStore> => {
      store = await target.createStore();
      return store;
    };
    const created = async (given: MemberRow): Promise<string> => {
      const outcome = await store.create(given);
      if (!outcome.ok) throw new Error(`create failed: ${outcome.reason}`);
      return outcome.etag;
    };

    it("reads nothing for a member or group never written", async () => {
      await fresh();
      expect(await store.read("cluster", "node-1")).toEqual({ row: undefined, marker: undefined });
      expect(await store.listGroup("cluster")).toEqual({ group: "cluster", rows: [], marker: undefined });
      expect(await store.listAll()).toEqual([]);
    });

    it("creates a row and reads back every field with its ETag", async () => {
      await fresh();
      const etag = await created(row());
      const { row: read, marker: none } = await store.read("cluster", "node-1");
      expect(read && fieldsOf(read)).toEqual(row());
      expect(read?.etag).toBe(etag);
      expect(none).toBeUndefined();
    });

    it("round-trips a null address, a goodbye, a replaced session and a full list of ended sessions", async () => {
      await fresh();
      const endedSessions = Array.from({ length: 8 }, (_, i) => `${"s".repeat(120)}-${i}`);
      const full = row({ address: null, leftAt: 1_763_632_900_000, heartbeats: 2 ** 40, previous: { session: "s0", state: "leaving", at: 1_763_632_750_000 }, endedSessions });
      await created(full);
      expect(fieldsOf((await store.read("cluster", "node-1")).row!)).toEqual(full);
      const unicode = row({ member: "node-2", address: "höst:😀:5800", previous: { session: "s0", state: "unreachable", at: 5 } });
      await created(unicode);
      expect(fieldsOf((await store.read("cluster", "node-2")).row!)).toEqual(unicode);
    });

    it("refuses a second create for the same member as a typed outcome, keeping the first", async () => {
      await fresh();
      await created(row());
      expect(await store.create(row({ session: "s2" }))).toEqual({ ok: false, reason: "exists" });
      expect((await store.read("cluster", "node-1")).row?.session).toBe("s1");
    });

    it("keeps groups apart (a group is one partition) and lists one group in one query", async () => {
      await fresh();
      await created(row());
      await created(row({ member: "node-2", session: "s2" }));
      await created(row({ group: "other.v2:eu-1_a", member: "node-1", session: "x1" }));
      const listed = await store.listGroup("cluster");
      expect(listed.group).toBe("cluster");
      expect(sorted(listed)).toEqual([row(), row({ member: "node-2", session: "s2" })]);
      expect((await store.read("other.v2:eu-1_a", "node-1")).row?.session).toBe("x1");
      const all = await store.listAll();
      expect(all.map((snapshot) => [snapshot.group, snapshot.rows.length]).sort()).toEqual([
        ["cluster", 2],
        ["other.v2:eu-1_a", 1],
      ]);
    });

    it("reads a member together with its group's marker, and lists the marker with the group but never as a member", async () => {
      await fresh();
      await created(row());
      const gap = { startedAt: 1_763_632_000_000, endedAt: 1_763_632_030_000 };
      const written = await store.writeMarker(marker({ gap, removedSessions: ["gone-1", "gone-2"] }), undefined);
      expect(written.ok).toBe(true);
      const { row: read, marker: sweep } = await store.read("cluster", "node-1");
      expect(read?.session).toBe("s1");
      expect(sweep).toEqual({ ...marker({ gap, removedSessions: ["gone-1", "gone-2"] }), etag: written.ok ? written.etag : "" });
      expect((await store.read("cluster", "nobody")).marker?.sweptAt).toBe(marker().sweptAt);
      const listed = await store.listGroup("cluster");
      expect(listed.rows.map((member) => member.member)).toEqual(["node-1"]);
      expect(listed.marker?.removedSessions).toEqual(["gone-1", "gone-2"]);
      expect((await store.listAll())[0]?.marker?.gap).toEqual(gap);
    });

    it("writes the marker as a create without an ETag and If-Match with one; a stale one changes nothing", async () => {
      await fresh();
      const first = await store.writeMarker(marker(), undefined);
      if (!first.ok) throw new Error("marker create failed");
      expect(await store.writeMarker(marker({ sweptAt: 2 }), undefined)).toEqual({ ok: false, reason: "exists" });
      const second = await store.writeMarker(marker({ sweptAt: 1_763_632_805_000 }), first.etag);
      expect(second.ok).toBe(true);
      expect(await store.writeMarker(marker({ sweptAt: 3 }), first.etag)).toEqual({ ok: false, reason: "changed" });
      expect((await store.listGroup("cluster")).marker).toMatchObject({ sweptAt: 1_763_632_805_000, gap: null });
    });

    it("replaces the whole row when the ETag matches (a goodbye, a replacement), with a new ETag", async () => {
      await fresh();
      const etag = await created(row({ leftAt: null, previous: { session: "s0", state: "unreachable", at: 1 } }));
      const next = row({ session: "s2", address: null, heartbeats: 1, previous: null, endedSessions: ["s1"] });
      const replaced = await store.replace(next, etag);
      expect(replaced.ok && replaced.etag !== etag).toBe(true);
      expect(fieldsOf((await store.read("cluster", "node-1")).row!)).toEqual(next);
    });

    it("refuses a replace with a stale ETag and changes nothing", async () => {
      await fresh();
      const etag = await created(row());
      expect((await store.replace(row({ heartbeats: 2 }), etag)).ok).toBe(true);
      expect(await store.replace(row({ session: "thief" }), etag)).toEqual({ ok: false, reason: "changed" });
      expect((await store.read("cluster", "node-1")).row).toMatchObject({ session: "s1", heartbeats: 2 });
    });

    it("renews renewedAt and heartbeats (and the address, when given) only, keeping everything else", async () => {
      await fresh();
      const etag = await created(row({ previous: { session: "s0", state: "leaving", at: 7 }, endedSessions: ["s0"] }));
      const renewed = await store.renew("cluster", "node-1", { renewedAt: 1_763_632_805_000, heartbeats: 2 }, etag);
      if (!renewed.ok) throw new Error("renew failed");
      const read = (await store.read("cluster", "node-1")).row!;
      expect(fieldsOf(read)).toEqual(row({ renewedAt: 1_763_632_805_000, heartbeats: 2, previous: { session: "s0", state: "leaving", at: 7 }, endedSessions: ["s0"] }));
      expect(read.etag).toBe(renewed.etag);
      expect((await store.renew("cluster", "node-1", { renewedAt: 1_763_632_806_000, heartbeats: 3, address: null }, renewed.etag)).ok).toBe(true);
      expect((await store.read("cluster", "node-1")).row).toMatchObject({ address: null, heartbeats: 3 });
    });

    it("refuses a renewal with a stale ETag, and one of a missing row, as typed outcomes", async () => {
      await fresh();
      const etag = await created(row());
      await store.renew("cluster", "node-1", { renewedAt: 2, heartbeats: 2 }, etag);
      expect(await store.renew("cluster", "node-1", { renewedAt: 3, heartbeats: 9 }, etag)).toEqual({ ok: false, reason: "changed" });
      expect((await store.read("cluster", "node-1")).row?.heartbeats).toBe(2);
      expect(await store.renew("cluster", "ghost", { renewedAt: 3, heartbeats: 2 }, etag)).toEqual({ ok: false, reason: "missing" });
      expect(await store.replace(row({ member: "ghost" }), etag)).toEqual({ ok: false, reason: "missing" });
      expect((await store.read("cluster", "ghost")).row).toBeUndefined();
    });

    it("deletes only with the current ETag: a stale one and a missing row are typed outcomes", async () => {
      await fresh();
      const etag = await created(row());
      const renewed = await store.renew("cluster", "node-1", { renewedAt: 2, heartbeats: 2 }, etag);
      expect(await store.delete("cluster", "node-1", etag)).toEqual({ ok: false, reason: "changed" });
      expect((await store.read("cluster", "node-1")).row).toBeDefined();
      expect(await store.delete("cluster", "node-1", renewed.ok ? renewed.etag : "")).toEqual({ ok: true });
      expect((await store.read("cluster", "node-1")).row).toBeUndefined();
      expect(await store.delete("cluster", "node-1", etag)).toEqual({ ok: false, reason: "missing" });
    });

    it("lets exactly one of many concurrent creates, and one of many renewals on one ETag, win", async () => {
      await fresh();
      const creates = await Promise.all(Array.from({ length: 8 }, (_, i) => store.create(row({ session: `racer-${i}` }))));
      expect(creates.filter((outcome) => outcome.ok)).toHaveLength(1);
      const { row: winner } = await store.read("cluster", "node-1");
      const renewals = await Promise.all(Array.from({ length: 8 }, (_, i) => store.renew("cluster", "node-1", { renewedAt: i, heartbeats: 2 }, winner!.etag)));
      expect(renewals.filter((outcome) => outcome.ok)).toHaveLength(1);
    });

    it("turns an aborted call into StoreUnavailableError and writes nothing", async () => {
      await fresh();
      const abortSignal = AbortSignal.abort();
      await expect(store.read("cluster", "node-1", { abortSignal })).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.create(row(), { abortSignal })).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.listGroup("cluster", { abortSignal })).rejects.toBeInstanceOf(StoreUnavailableError);
      expect((await store.read("cluster", "node-1")).row).toBeUndefined();
    });
  });
}
