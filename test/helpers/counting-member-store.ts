import type { MemberStore } from "../../shared/members/member-store.js";

type Method = "read" | "listGroup" | "listAll" | "create" | "replace" | "renew" | "delete" | "writeMarker";

/** Wraps a member store and records every call in order, to pin the cost of each request. */
export class CountingMemberStore implements MemberStore {
  readonly calls: Method[] = [];

  constructor(private readonly inner: MemberStore) {}

  get kind(): string {
    return this.inner.kind;
  }

  reset(): void {
    this.calls.length = 0;
  }

  read: MemberStore["read"] = (...args) => this.#record("read", () => this.inner.read(...args));
  listGroup: MemberStore["listGroup"] = (...args) => this.#record("listGroup", () => this.inner.listGroup(...args));
  listAll: MemberStore["listAll"] = (...args) => this.#record("listAll", () => this.inner.listAll(...args));
  create: MemberStore["create"] = (...args) => this.#record("create", () => this.inner.create(...args));
  replace: MemberStore["replace"] = (...args) => this.#record("replace", () => this.inner.replace(...args));
  renew: MemberStore["renew"] = (...args) => this.#record("renew", () => this.inner.renew(...args));
  delete: MemberStore["delete"] = (...args) => this.#record("delete", () => this.inner.delete(...args));
  writeMarker: MemberStore["writeMarker"] = (...args) => this.#record("writeMarker", () => this.inner.writeMarker(...args));

  #record<T>(method: Method, call: () => Promise<T>): Promise<T> {
    this.calls.push(method);
    return call();
  }
}
