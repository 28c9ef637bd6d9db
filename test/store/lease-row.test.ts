import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { toLeaseRecord, type StoredLease } from "../../shared/store/lease-row.js";
import { toTermRecord } from "../../shared/store/term-row.js";

const good: StoredLease = {
  utype: "scheduler",
  uuid: "holder-1",
  address: "10.0.0.4:5800",
  epoch: 3,
  renewedAt: 1_700_000_000_000,
  revoked: false,
  endedUuids: ["old-1"],
  etag: 'W/"1"',
};

describe("a lease row read from a store", () => {
  it("is taken as it is when every field holds", () => {
    expect(toLeaseRecord(good, "Test store")).toEqual(good);
  });

  it("reads a row from before revocation and ended uuids as not revoked, with none ended; a released one keeps its epoch", () => {
    const legacy = { ...good, uuid: "", address: null, revoked: undefined, endedUuids: undefined };
    expect(toLeaseRecord(legacy, "Test store")).toEqual({ ...good, uuid: "", address: null, revoked: false, endedUuids: [] });
  });

  // Each would otherwise become a NaN epoch, a lost revocation or a forgotten ended uuid.
  it.each<[string, Partial<StoredLease>, RegExp]>([
    ["an epoch that is not a number", { epoch: Number.NaN }, /epoch/],
    ["an epoch stored as text", { epoch: "3" }, /epoch/],
    ["a fractional renewedAt", { renewedAt: 1.5 }, /renewedAt/],
    ["a negative epoch", { epoch: -1 }, /epoch/],
    ["a revoked flag that is not a boolean", { revoked: "yes" }, /revoked/],
    ["an ended list that is not a list", { endedUuids: "[not json" }, /endedUuids/],
    ["an ended list with a number in it", { endedUuids: ["a", 1] }, /endedUuids/],
    ["a uuid outside the id rule", { uuid: "a b" }, /uuid/],
    ["a missing utype", { utype: undefined }, /utype/],
    ["an address that is a number", { address: 5800 }, /address/],
    ["no ETag", { etag: undefined }, /ETag/],
  ])("refuses %s as a StoreUnavailableError that names the field", (_name, damage, field) => {
    const read = (): unknown => toLeaseRecord({ ...good, ...damage }, "Test store");
    expect(read).toThrow(StoreUnavailableError);
    expect(read).toThrow(field);
    expect(read).toThrow(/^Test store holds a corrupt lease/);
  });
});

describe("a term history row read from a store", () => {
  const row = { utype: "scheduler", epoch: 3, uuid: "holder-3", address: null, startedAt: 1_000, endedAt: 2_000, endedBy: "taken-over" };

  it("keeps the transactional mark as stored, and a row of an earlier version (no mark) without one", () => {
    expect(toTermRecord({ ...row, transactional: true }, "Test store")).toEqual({ ...row, transactional: true });
    expect(toTermRecord({ ...row, transactional: false }, "Test store")).toEqual({ ...row, transactional: false });
    expect(toTermRecord(row, "Test store")).toEqual(row);
    expect(toTermRecord({ ...row, transactional: null }, "Test store")).toEqual(row);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ["a transactional mark that is not a boolean", { transactional: "yes" }, /transactional/],
    ["an epoch that is not a number", { epoch: "3" }, /epoch/],
    ["an end that is not one of the stored ends", { endedBy: "expired" }, /endedBy/],
  ])("refuses %s as a StoreUnavailableError that names the field", (_name, damage, field) => {
    const read = (): unknown => toTermRecord({ ...row, ...damage }, "Test store");
    expect(read).toThrow(StoreUnavailableError);
    expect(read).toThrow(field);
    expect(read).toThrow(/^Test store holds a corrupt term row for "scheduler"/);
  });
});
