import type { Attributes, Histogram } from "@opentelemetry/api";
import type { LeaseStore } from "../lease/lease-store.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import type { MemberStore } from "../members/member-store.js";
import { ATTRIBUTE, dbSystemOf } from "./metric-names.js";

type StoreRole = "leases" | "members";
type Result = "ok" | "lost" | "unavailable" | "error";

/**
 * The lease store with each call timed into `duration` (seconds). The wrapper adds no store
 * call: each method calls the inner one once, with the same arguments, and hands back its
 * result or its error untouched. A typed lost race ({ok: false}) is counted as "lost";
 * a StoreUnavailableError as "unavailable" with `error.type`.
 */
export function meteredLeaseStore(store: LeaseStore, duration: Histogram): LeaseStore {
  const time = timer(duration, "leases", store.kind);
  return {
    kind: store.kind,
    read: (...args) => time("read", () => store.read(...args)),
    create: (...args) => time("create", () => store.create(...args)),
    replace: (...args) => time("replace", () => store.replace(...args)),
    renew: (...args) => time("renew", () => store.renew(...args)),
    list: (...args) => time("list", () => store.list(...args)),
    ping: (...args) => time("ping", () => store.ping(...args)),
    recordTerm: (...args) => time("recordTerm", () => store.recordTerm(...args)),
    readTerms: (...args) => time("readTerms", () => store.readTerms(...args)),
    upsertStandby: (...args) => time("upsertStandby", () => store.upsertStandby(...args)),
    readStandbys: (...args) => time("readStandbys", () => store.readStandbys(...args)),
    listStandbys: (...args) => time("listStandbys", () => store.listStandbys(...args)),
    deleteStandby: (...args) => time("deleteStandby", () => store.deleteStandby(...args)),
  };
}

/** The membership store, timed the same way. */
export function meteredMemberStore(store: MemberStore, duration: Histogram): MemberStore {
  const time = timer(duration, "members", store.kind);
  return {
    kind: store.kind,
    read: (...args) => time("read", () => store.read(...args)),
    listGroup: (...args) => time("listGroup", () => store.listGroup(...args)),
    listAll: (...args) => time("listAll", () => store.listAll(...args)),
    create: (...args) => time("create", () => store.create(...args)),
    replace: (...args) => time("replace", () => store.replace(...args)),
    renew: (...args) => time("renew", () => store.renew(...args)),
    delete: (...args) => time("delete", () => store.delete(...args)),
    writeMarker: (...args) => time("writeMarker", () => store.writeMarker(...args)),
  };
}

function timer(duration: Histogram, role: StoreRole, kind: string): <T>(operation: string, call: () => Promise<T>) => Promise<T> {
  // Attribute sets made once per (operation, result), so a timed call allocates none.
  const sets = new Map<string, Attributes>();
  const attributes = (operation: string, result: Result, error: string | undefined): Attributes => {
    const key = `${operation}\u0000${result}\u0000${error ?? ""}`;
    let set = sets.get(key);
    if (set === undefined) {
      set = Object.freeze({
        [ATTRIBUTE.store]: role,
        [ATTRIBUTE.dbSystem]: dbSystemOf(kind),
        [ATTRIBUTE.dbOperation]: operation,
        [ATTRIBUTE.storeResult]: result,
        ...(error === undefined ? {} : { [ATTRIBUTE.errorType]: error }),
      });
      sets.set(key, set);
    }
    return set;
  };
  return async (operation, call) => {
    const startedAt = performance.now();
    try {
      const value = await call();
      duration.record((performance.now() - startedAt) / 1000, attributes(operation, lost(value) ? "lost" : "ok", undefined));
      return value;
    } catch (error) {
      const result = error instanceof StoreUnavailableError ? "unavailable" : "error";
      duration.record((performance.now() - startedAt) / 1000, attributes(operation, result, result === "unavailable" ? "StoreUnavailable" : "_OTHER"));
      throw error;
    }
  };
}

/** A typed outcome of a conditional write or delete that lost its race. */
function lost(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { ok?: unknown }).ok === false;
}
