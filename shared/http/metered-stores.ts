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
  const operations = {
    read: true,
    create: true,
    replace: true,
    renew: true,
    list: true,
    ping: true,
    readTerms: true,
    upsertStandby: true,
    readStandbys: true,
    listStandbys: true,
    deleteStandby: true,
  } as const satisfies Operations<LeaseStore>;
  return metered(store, operations, timer(duration, "leases", store.kind));
}

/** The membership store, timed the same way. */
export function meteredMemberStore(store: MemberStore, duration: Histogram): MemberStore {
  const operations = { read: true, listGroup: true, listAll: true, create: true, replace: true, renew: true, delete: true, writeMarker: true } as const satisfies Operations<MemberStore>;
  return metered(store, operations, timer(duration, "members", store.kind));
}

/** Every method of a store by name: a store method left out of the list does not compile. */
type Operations<S> = { readonly [K in Exclude<keyof S, "kind">]: true };

/** `store` with each method of `operations` timed under its own name, and its `kind`. */
function metered<S extends { readonly kind: string }>(store: S, operations: Operations<S>, time: Timer): S {
  const methods = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const timed = Object.fromEntries(Object.keys(operations).map((name) => [name, (...args: unknown[]) => time(name, () => methods[name]!.apply(store, args))]));
  return { kind: store.kind, ...timed } as unknown as S;
}

type Timer = <T>(operation: string, call: () => Promise<T>) => Promise<T>;

function timer(duration: Histogram, role: StoreRole, kind: string): Timer {
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
