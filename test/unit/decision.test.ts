import { describe, expect, it } from "vitest";
import { decide, type LeaseAction, type LeaseRequest } from "../../shared/lease/decision.js";
import { MAX_ENDED_UUIDS, type LeaseState } from "../../shared/lease/lease.js";

const T = 5000;
const NOW = 1_000_000;
const entry = (overrides: Partial<LeaseState> = {}): LeaseState => ({
  utype: "scheduler",
  uuid: "holder",
  address: "10.0.0.4:5800",
  epoch: 3,
  renewedAt: NOW - 1000,
  revoked: false,
  endedUuids: ["gone-1"],
  ...overrides,
});
/** `address` undefined means omitted (keep the stored one). */
const heartbeat = (uuid: string, address?: string | null): LeaseRequest => ({ op: "heartbeat", utype: "scheduler", uuid, address });
const release = (uuid: string, provenEpoch?: number): LeaseRequest => ({ op: "release", utype: "scheduler", uuid, provenEpoch });
const fresh = { revoked: false, endedUuids: [] };

describe("decide (docs/protocol.md#the-rule-server-side), table-driven", () => {
  // `epochFloor`: the least epoch a new term may get (ha_time in the service); 0 unless a row
  // gives one, so that most rows show the stored counter alone.
  const rows: Array<{ name: string; entry: LeaseState | undefined; request: LeaseRequest; haTime?: number; epochFloor?: number; expected: LeaseAction }> = [
    // ---- The epoch floor: a new term's epoch is never below ha_time ----------------------
    {
      name: "floor: the first term's epoch is ha_time (rounded up to the ring slot after 0's)",
      entry: undefined,
      request: heartbeat("new"),
      epochFloor: 1_795_168_800_000,
      expected: { kind: "create", next: { utype: "scheduler", uuid: "new", address: null, epoch: 1_795_168_800_001, renewedAt: NOW, startedAt: NOW, ...fresh } },
    },
    {
      name: "floor: a takeover's epoch is ha_time when the stored epoch + 1 lies below it (in the slot after the stored epoch's)",
      entry: entry({ renewedAt: NOW - T - 1 }),
      request: heartbeat("rival"),
      epochFloor: NOW,
      // 1_000_000 ≡ 0 (mod 16); the slot after epoch 3's is 4: 1_000_004.
      expected: { kind: "take-over", next: { utype: "scheduler", uuid: "rival", address: null, epoch: 1_000_004, renewedAt: NOW, startedAt: NOW, revoked: false, endedUuids: ["gone-1", "holder"] } },
    },
    {
      name: "floor: a stored epoch above the clock (a clock that went back, a skewed instance) still gets + 1",
      entry: entry({ renewedAt: NOW - T - 1, epoch: 2_000_000 }),
      request: heartbeat("rival"),
      epochFloor: NOW,
      expected: { kind: "take-over", next: { utype: "scheduler", uuid: "rival", address: null, epoch: 2_000_001, renewedAt: NOW, startedAt: NOW, revoked: false, endedUuids: ["gone-1", "holder"] } },
    },
    // ---- A term the store forgot (its token names what the entry never handed out) ------
    {
      name: "erased: a token above the entry's epoch is refused as ended, even when the entry ran out (it would be a takeover)",
      entry: entry({ renewedAt: NOW - T - 1, epoch: 2, uuid: "old" }),
      request: { op: "heartbeat", utype: "scheduler", uuid: "lost-holder", address: undefined, tokenEpoch: 4 },
      expected: { kind: "reject", reason: "ended", holder: entry({ renewedAt: NOW - T - 1, epoch: 2, uuid: "old" }) },
    },
    {
      name: "erased: a token for the entry's epoch held by another uuid (the restored holder, or a released role) is refused as ended",
      entry: entry({ uuid: "" }),
      request: { op: "heartbeat", utype: "scheduler", uuid: "lost-holder", address: undefined, tokenEpoch: 3 },
      expected: { kind: "reject", reason: "ended", holder: entry({ uuid: "" }) },
    },
    {
      name: "erased: a token on no entry at all (a restore from before the role's first term) is refused; nothing is created",
      entry: undefined,
      request: { op: "heartbeat", utype: "scheduler", uuid: "lost-holder", address: undefined, tokenEpoch: 7 },
      expected: { kind: "reject", reason: "ended", holder: undefined },
    },
    {
      name: "the holder's own token for the entry's term renews as before",
      entry: entry(),
      request: { op: "heartbeat", utype: "scheduler", uuid: "holder", address: undefined, tokenEpoch: 3 },
      expected: { kind: "renew", next: entry({ renewedAt: NOW }) },
    },
    {
      name: "an older term's token (below the entry's epoch) is not erased: the ended list and the rules decide, as without a token",
      entry: entry({ renewedAt: NOW - T - 1 }),
      request: { op: "heartbeat", utype: "scheduler", uuid: "gone-1", address: undefined, tokenEpoch: 2 },
      expected: { kind: "reject", reason: "ended", holder: entry({ renewedAt: NOW - T - 1 }) },
    },
    // ---- UpdateHeartBeat ----------------------------------------------------------------
    {
      name: "heartbeat on no entry creates epoch 1",
      entry: undefined,
      request: heartbeat("new", "h:1"),
      expected: { kind: "create", next: { utype: "scheduler", uuid: "new", address: "h:1", epoch: 1, renewedAt: NOW, startedAt: NOW, ...fresh } },
    },
    {
      name: "heartbeat on no entry with the address omitted creates it without one",
      entry: undefined,
      request: heartbeat("new"),
      expected: { kind: "create", next: { utype: "scheduler", uuid: "new", address: null, epoch: 1, renewedAt: NOW, startedAt: NOW, ...fresh } },
    },
    {
      name: "heartbeat by the holder renews, epoch unchanged, a new address set",
      entry: entry(),
      request: heartbeat("holder", "moved:2"),
      expected: { kind: "renew", next: entry({ address: "moved:2", renewedAt: NOW }) },
    },
    {
      name: "heartbeat by the holder with the address omitted keeps the stored one",
      entry: entry(),
      request: heartbeat("holder"),
      expected: { kind: "renew", next: entry({ renewedAt: NOW }) },
    },
    {
      name: "heartbeat by the holder with address null clears it",
      entry: entry(),
      request: heartbeat("holder", null),
      expected: { kind: "renew", next: entry({ address: null, renewedAt: NOW }) },
    },
    {
      name: "heartbeat by the holder renews even after expiry (nobody took over)",
      entry: entry({ renewedAt: NOW - T - 10_000 }),
      request: heartbeat("holder"),
      expected: { kind: "renew", next: entry({ renewedAt: NOW }) },
    },
    {
      name: "heartbeat by a revoked holder is refused (revoked), even after expiry",
      entry: entry({ revoked: true, renewedAt: NOW - T - 1 }),
      request: heartbeat("holder"),
      expected: { kind: "reject", reason: "revoked", holder: entry({ revoked: true, renewedAt: NOW - T - 1 }) },
    },
    {
      name: "heartbeat by an ended uuid is refused (ended), even on a released lease",
      entry: entry({ uuid: "", address: null, endedUuids: ["a", "gone-1"] }),
      request: heartbeat("gone-1"),
      expected: { kind: "reject", reason: "ended", holder: entry({ uuid: "", address: null, endedUuids: ["a", "gone-1"] }) },
    },
    {
      name: "a rival is rejected (held) while the lease is live",
      entry: entry(),
      request: heartbeat("rival"),
      expected: { kind: "reject", reason: "held", holder: entry() },
    },
    {
      name: "a rival is rejected while a revoked lease is still live: a revoke opens no early window",
      entry: entry({ revoked: true }),
      request: heartbeat("rival"),
      expected: { kind: "reject", reason: "held", holder: entry({ revoked: true }) },
    },
    {
      name: "boundary: ha_time - renewedAt == T is still live, so a rival is rejected",
      entry: entry({ renewedAt: NOW - T }),
      request: heartbeat("rival"),
      expected: { kind: "reject", reason: "held", holder: entry({ renewedAt: NOW - T }) },
    },
    {
      name: "boundary: T + 1 is expired, so a rival takes over with epoch + 1 and the old holder ends",
      entry: entry({ renewedAt: NOW - T - 1 }),
      request: heartbeat("rival", "r:1"),
      expected: { kind: "take-over", next: { utype: "scheduler", uuid: "rival", address: "r:1", epoch: 4, renewedAt: NOW, startedAt: NOW, revoked: false, endedUuids: ["gone-1", "holder"] } },
    },
    {
      name: "an expired revoked lease is taken over; the takeover is not revoked",
      entry: entry({ revoked: true, renewedAt: NOW - T - 1 }),
      request: heartbeat("rival"),
      expected: { kind: "take-over", next: { utype: "scheduler", uuid: "rival", address: null, epoch: 4, renewedAt: NOW, startedAt: NOW, revoked: false, endedUuids: ["gone-1", "holder"] } },
    },
    {
      name: "a released entry can be taken at once; the epoch and the ended list survive the release",
      entry: entry({ uuid: "", address: null, renewedAt: NOW }),
      request: heartbeat("rival"),
      expected: { kind: "take-over", next: { utype: "scheduler", uuid: "rival", address: null, epoch: 4, renewedAt: NOW, startedAt: NOW, revoked: false, endedUuids: ["gone-1"] } },
    },
    {
      name: "a retired-only entry (epoch 0) is taken with epoch 1",
      entry: entry({ uuid: "", address: null, epoch: 0, endedUuids: ["stopping"] }),
      request: heartbeat("first"),
      expected: { kind: "take-over", next: { utype: "scheduler", uuid: "first", address: null, epoch: 1, renewedAt: NOW, startedAt: NOW, revoked: false, endedUuids: ["stopping"] } },
    },
    // ---- Release ------------------------------------------------------------------------
    {
      name: "a proven release (token epoch == entry epoch) clears the holder, keeps the epoch, ends the uuid",
      entry: entry(),
      request: release("holder", 3),
      expected: { kind: "release", next: entry({ uuid: "", address: null, renewedAt: NOW, endedUuids: ["gone-1", "holder"] }) },
    },
    {
      name: "a proven release of a revoked lease clears it too: the holder consents",
      entry: entry({ revoked: true }),
      request: release("holder", 3),
      expected: { kind: "release", next: entry({ uuid: "", address: null, renewedAt: NOW, endedUuids: ["gone-1", "holder"] }) },
    },
    {
      name: "release by the holder without proof revokes; renewedAt is not touched, so no lease is extended",
      entry: entry(),
      request: release("holder"),
      expected: { kind: "revoke", next: entry({ revoked: true }) },
    },
    {
      name: "a token naming another epoch proves nothing: revoke",
      entry: entry(),
      request: release("holder", 2),
      expected: { kind: "revoke", next: entry({ revoked: true }) },
    },
    { name: "a second revoke writes nothing", entry: entry({ revoked: true }), request: release("holder"), expected: { kind: "none" } },
    {
      name: "an expired holder's own DELETE without proof clears it",
      entry: entry({ renewedAt: NOW - T - 1 }),
      request: release("holder"),
      expected: { kind: "release", next: entry({ uuid: "", address: null, renewedAt: NOW, endedUuids: ["gone-1", "holder"] }) },
    },
    {
      name: "release by another uuid retires it, leaving the live holder's lease as it is",
      entry: entry(),
      request: release("stopping"),
      expected: { kind: "retire", next: entry({ endedUuids: ["gone-1", "stopping"] }) },
    },
    {
      name: "release with no entry retires the uuid on a placeholder of epoch 0",
      entry: undefined,
      request: release("stopping"),
      expected: { kind: "retire", next: { utype: "scheduler", uuid: "", address: null, epoch: 0, renewedAt: NOW, revoked: false, endedUuids: ["stopping"] } },
    },
    {
      name: "release by an already ended uuid writes nothing",
      entry: entry({ uuid: "" }),
      request: release("gone-1"),
      expected: { kind: "none" },
    },
  ];

  it.each(rows)("$name", ({ entry: current, request, haTime, epochFloor, expected }) => {
    expect(decide(current, request, haTime ?? NOW, T, epochFloor ?? 0)).toEqual(expected);
  });

  it("with the floor at ha_time (the service's default), each new term's epoch is above the last and never below ha_time", () => {
    let state: LeaseState | undefined;
    let haTime = NOW;
    const epochs: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const action = decide(state, heartbeat(`holder-${i}`), haTime, T);
      if (action.kind !== "create" && action.kind !== "take-over") throw new Error(action.kind);
      state = action.next;
      expect(state.epoch).toBeGreaterThanOrEqual(haTime);
      expect(state.epoch).toBeLessThan(haTime + 16);
      epochs.push(state.epoch);
      haTime += T + 1;
    }
    expect(epochs).toEqual([...epochs].sort((a, b) => a - b));
    expect(new Set(epochs).size).toBe(5);
    // Consecutive ring slots, however far the clock lifted each epoch.
    expect(epochs.map((epoch) => epoch % 16)).toEqual([1, 2, 3, 4, 5]);
  });

  it("never lowers the epoch: with the stored counter alone, every takeover after expiry or release adds exactly one", () => {
    let state: LeaseState | undefined;
    let haTime = NOW;
    const epochs: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const action = decide(state, heartbeat(`holder-${i}`), haTime, T, 0);
      if (action.kind !== "create" && action.kind !== "take-over") throw new Error(action.kind);
      state = action.next;
      epochs.push(state.epoch);
      if (i % 2 === 0) {
        haTime += T + 1; // expire
      } else {
        const released = decide(state, release(`holder-${i}`, state.epoch), haTime, T, 0);
        if (released.kind !== "release") throw new Error(released.kind);
        state = released.next;
      }
    }
    expect(epochs).toEqual([1, 2, 3, 4, 5]);
    expect(state?.endedUuids).toEqual(["holder-0", "holder-1", "holder-2", "holder-3"]);
  });

  it(`remembers the last ${MAX_ENDED_UUIDS} ended uuids, oldest forgotten first, and never writes the list on a renewal`, () => {
    let state = decide(undefined, heartbeat("u0"), NOW, T);
    let haTime = NOW;
    for (let i = 1; i <= MAX_ENDED_UUIDS + 1; i += 1) {
      if (state.kind !== "create" && state.kind !== "take-over") throw new Error(state.kind);
      haTime += T + 1;
      state = decide(state.next, heartbeat(`u${i}`), haTime, T);
    }
    if (state.kind !== "take-over") throw new Error(state.kind);
    const ended = state.next.endedUuids;
    expect(ended).toHaveLength(MAX_ENDED_UUIDS);
    expect(ended[0]).toBe("u1");
    expect(ended.at(-1)).toBe(`u${MAX_ENDED_UUIDS}`);
    const renewed = decide(state.next, heartbeat(`u${MAX_ENDED_UUIDS + 1}`), haTime + 1, T);
    expect(renewed.kind === "renew" && renewed.next.endedUuids).toBe(ended);
  });

  it("is pure: the same inputs give the same action and the entry is not modified", () => {
    const current = Object.freeze(entry({ renewedAt: NOW - T - 1 }));
    const first = decide(current, heartbeat("rival"), NOW, T);
    const second = decide(current, heartbeat("rival"), NOW, T);
    expect(first).toEqual(second);
    expect(current).toEqual(entry({ renewedAt: NOW - T - 1 }));
    expect(decide(current, release("holder"), NOW, T)).toEqual(decide(current, release("holder"), NOW, T));
    expect(current.endedUuids).toEqual(["gone-1"]);
  });
});
