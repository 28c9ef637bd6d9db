import { describe, expect, it } from "vitest";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import { MemberTokenSigner } from "../../shared/members/member-token.js";
import { SignedToken } from "../../shared/service/signed-token.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { TokenKeys, type TokenSecretStore } from "../../shared/service/token-keys.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";

const CLAIMS = ["scheduler", "uuid-1", 3, "etag-1", null];
const LEASE = { utype: "scheduler", uuid: "uuid-1", epoch: 3, etag: "etag-1", address: null };

/** A store that fails its first `failures` asks, then keeps the first candidate. */
function flakyStore(failures: number, stored?: string): TokenSecretStore & { asks: number } {
  const store = {
    asks: 0,
    kept: stored,
    async tokenSecret(candidate: string): Promise<string> {
      store.asks += 1;
      if (store.asks <= failures) throw new StoreUnavailableError("the store is down");
      store.kept ??= candidate;
      return store.kept;
    },
  };
  return store;
}

/** The token secret kept in the store (docs/configuration.md, HA_LEASE_SECRET). */
describe("TokenKeys", () => {
  it("seals with the store's secret once loaded: instances on one store open each other's tokens", async () => {
    const store = new MemoryLeaseStore();
    const [a, b] = [new TokenKeys(), new TokenKeys()];
    await Promise.all([a.loadFrom(store, { timeoutMs: 1000 }), b.loadFrom(store, { timeoutMs: 1000 })]);
    expect([a.source, b.source]).toEqual(["store", "store"]);
    expect(new SignedToken("t1", b).open(new SignedToken("t1", a).seal(CLAIMS), 5, 1000)).toEqual(CLAIMS);
    // Both kinds of token, through their signers.
    expect(new LeaseTokenSigner(b).verify(new LeaseTokenSigner(a).issue(LEASE), LEASE)).toEqual(LEASE);
    const member = { group: "g", member: "m", session: "s", heartbeats: 1, joinedAt: 1, renewedAt: 2, address: null, previous: null, etag: "e" };
    expect(new MemberTokenSigner(b).verify(new MemberTokenSigner(a).issue(member), member)).toEqual(member);
  });

  it("keeps opening what it sealed with its drawn key before the store answered; others never open those", async () => {
    const store = new MemoryLeaseStore();
    const early = new TokenKeys();
    const before = new SignedToken("t1", early).seal(CLAIMS);
    await early.loadFrom(store, { timeoutMs: 1000 });
    const other = new TokenKeys();
    await other.loadFrom(store, { timeoutMs: 1000 });
    expect(new SignedToken("t1", early).open(before, 5, 1000)).toEqual(CLAIMS);
    expect(new SignedToken("t1", other).open(before, 5, 1000)).toBeUndefined();
    expect(new SignedToken("t1", early).seal(CLAIMS)).not.toBe(before);
  });

  it("asks again after a failure, backing off, and seals with its drawn key meanwhile", async () => {
    const store = flakyStore(2);
    const keys = new TokenKeys();
    const drawn = keys.sealing;
    const loaded = keys.loadFrom(store, { timeoutMs: 1000, retryMs: 5 });
    expect(keys.source).toBe("drawn");
    await loaded;
    expect(store.asks).toBe(3);
    expect(keys.source).toBe("store");
    expect(keys.sealing.equals(drawn)).toBe(false);
    expect(keys.opening).toHaveLength(2);
  });

  it("never adopts a stored value that is no secret: it keeps its drawn key", async () => {
    const store = flakyStore(0, "short");
    const keys = new TokenKeys();
    const asking = new AbortController();
    void keys.loadFrom(store, { timeoutMs: 1000, retryMs: 5, signal: asking.signal });
    await keys.settled(50);
    asking.abort();
    expect(store.asks).toBeGreaterThan(1);
    expect(keys.source).toBe("drawn");
    expect(keys.opening).toHaveLength(1);
  });

  it("with HA_LEASE_SECRET asks the store nothing and seals with the setting", async () => {
    const store = flakyStore(0);
    const keys = new TokenKeys("a-configured-secret-of-forty-characters-x");
    void keys.loadFrom(store, { timeoutMs: 1000 });
    await keys.settled(20);
    expect(store.asks).toBe(0);
    expect(keys.source).toBe("configured");
    expect(new SignedToken("t1", "a-configured-secret-of-forty-characters-x").open(new SignedToken("t1", keys).seal(CLAIMS), 5, 1000)).toEqual(CLAIMS);
  });

  it("settles within its bound when the store never answers, and at once with nothing to load", async () => {
    const silent: TokenSecretStore = { tokenSecret: () => new Promise<string>(() => undefined) };
    const keys = new TokenKeys();
    void keys.loadFrom(silent, { timeoutMs: 60_000, signal: AbortSignal.abort() });
    await keys.settled(30);
    expect(keys.source).toBe("drawn");
    // Nothing to load: no wait at all (a wait of a minute would outlast the test's timeout).
    await new TokenKeys().settled(60_000);
  });
});
