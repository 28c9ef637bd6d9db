import type { LeaseStore } from "../../shared/lease/lease-store.js";

type Method = "read" | "create" | "replace" | "renew" | "list" | "ping" | "readTerms" | "upsertStandby" | "readStandbys" | "listStandbys" | "deleteStandby";

/** Wraps a store and records every call in order, to pin the cost of each request. */
export class CountingStore implements LeaseStore {
  readonly calls: Method[] = [];

  constructor(private readonly inner: LeaseStore) {}

  get kind(): string {
    return this.inner.kind;
  }

  reset(): void {
    this.calls.length = 0;
  }

  read: LeaseStore["read"] = (...args) => this.#record("read", () => this.inner.read(...args));
  create: LeaseStore["create"] = (...args) => this.#record("create", () => this.inner.create(...args));
  replace: LeaseStore["replace"] = (...args) => this.#record("replace", () => this.inner.replace(...args));
  renew: LeaseStore["renew"] = (...args) => this.#record("renew", () => this.inner.renew(...args));
  list: LeaseStore["list"] = (...args) => this.#record("list", () => this.inner.list(...args));
  ping: LeaseStore["ping"] = (...args) => this.#record("ping", () => this.inner.ping(...args));
  readTerms: LeaseStore["readTerms"] = (...args) => this.#record("readTerms", () => this.inner.readTerms(...args));
  upsertStandby: LeaseStore["upsertStandby"] = (...args) => this.#record("upsertStandby", () => this.inner.upsertStandby(...args));
  readStandbys: LeaseStore["readStandbys"] = (...args) => this.#record("readStandbys", () => this.inner.readStandbys(...args));
  listStandbys: LeaseStore["listStandbys"] = (...args) => this.#record("listStandbys", () => this.inner.listStandbys(...args));
  deleteStandby: LeaseStore["deleteStandby"] = (...args) => this.#record("deleteStandby", () => this.inner.deleteStandby(...args));

  #record<T>(method: Method, call: () => Promise<T>): Promise<T> {
    this.calls.push(method);
    return call();
  }
}

/** A store that is down: every call fails as an unreachable store would. */
export function failingStore(error: Error): LeaseStore {
  const fail = async (): Promise<never> => {
    throw error;
  };
  return { kind: "table", read: fail, create: fail, replace: fail, renew: fail, list: fail, ping: fail, readTerms: fail, upsertStandby: fail, readStandbys: fail, listStandbys: fail, deleteStandby: fail };
}
