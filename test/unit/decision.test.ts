import { describe, expect, it } from "vitest";
import { decide, type LeaseAction, type LeaseRequest } from "../../shared/lease/decision.js";
import type { LeaseState } from "../../shared/lease/lease.js";

const T = 5000;
const NOW = 1_000_000;
const entry = (overrides: Partial<LeaseState> = {}): LeaseState => ({
  utype: "scheduler",
  uuid: "holder",
  address: "10.0.0.4:5800",
  epoch: 3,
  renewedAt: NOW - 1000,
  ...overrides,
});
const heartbeat = (uuid: string, address: string | null = null): LeaseRequest => ({
  op: "heartbeat",
  utype: "scheduler",
  uuid,
  address,
});
const release = (uuid: string): LeaseRequest => ({ op: "release", utype: "scheduler", uuid });

describe("decide (SPEC §2), table-driven", () => {
  const rows: Array<{ name: string; entry: LeaseState | undefined; request: LeaseRequest; haTime?: number; expected: LeaseAction }> = [
    {
      name: "heartbeat on no entry creates epoch 1",
      entry: undefined,
      request: heartbeat("new", "h:1"),
      expected: { kind: "create", next: { utype: "scheduler", uuid: "new", address: "h:1", epoch: 1, renewedAt: NOW } },
    },
    {
      name: "heartbeat by the holder renews, epoch unchanged",
      entry: entry(),
      request: heartbeat("holder", "moved:2"),
      expected: { kind: "renew", next: { utype: "scheduler", uuid: "holder", address: "moved:2", epoch: 3, renewedAt: NOW } },
    },
    {
      name: "heartbeat by the holder renews even after expiry (nobody took over)",
      entry: entry({ renewedAt: NOW - T - 10_000 }),
      request: heartbeat("holder"),
      expected: { kind: "renew", next: { utype: "scheduler", uuid: "holder", address: null, epoch: 3, renewedAt: NOW } },
    },
    {
      name: "a rival is rejected while the lease is live",
      entry: entry(),
      request: heartbeat("rival"),
      expected: { kind: "reject", holder: entry() },
    },
    {
      name: "boundary: ha_time - renewedAt == T is still live, so a rival is rejected",
      entry: entry({ renewedAt: NOW - T }),
      request: heartbeat("rival"),
      expected: { kind: "reject", holder: entry({ renewedAt: NOW - T }) },
    },
    {
      name: "boundary: ha_time - renewedAt == T + 1 is expired, so a rival takes over with epoch + 1",
      entry: entry({ renewedAt: NOW - T - 1 }),
      request: heartbeat("rival", "r:1"),
      expected: { kind: "takeOver", next: { utype: "scheduler", uuid: "rival", address: "r:1", epoch: 4, renewedAt: NOW } },
    },
    {
      name: "a released entry can be taken at once, and the epoch survives the release",
      entry: entry({ uuid: "", address: null, renewedAt: NOW }),
      request: heartbeat("rival"),
      expected: { kind: "takeOver", next: { utype: "scheduler", uuid: "rival", address: null, epoch: 4, renewedAt: NOW } },
    },
    {
      name: "release by the holder clears the holder and keeps the epoch",
      entry: entry(),
      request: release("holder"),
      expected: { kind: "release", next: { utype: "scheduler", uuid: "", address: null, epoch: 3, renewedAt: NOW } },
    },
    {
      name: "release by another uuid is rejected while the lease is live",
      entry: entry(),
      request: release("rival"),
      expected: { kind: "reject", holder: entry() },
    },
    {
      name: "release by another uuid of an expired lease does nothing",
      entry: entry({ renewedAt: NOW - T - 1 }),
      request: release("rival"),
      expected: { kind: "none" },
    },
    { name: "release with no entry does nothing", entry: undefined, request: release("holder"), expected: { kind: "none" } },
    {
      name: "release of an already released entry does nothing",
      entry: entry({ uuid: "" }),
      request: release("holder"),
      expected: { kind: "none" },
    },
  ];

  it.each(rows)("$name", ({ entry: current, request, haTime, expected }) => {
    expect(decide(current, request, haTime ?? NOW, T)).toEqual(expected);
  });

  it("never lowers the epoch: every takeover after expiry or release adds exactly one", () => {
    let state: LeaseState | undefined;
    let haTime = NOW;
    const epochs: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const action = decide(state, heartbeat(`holder-${i}`), haTime, T);
      if (action.kind !== "create" && action.kind !== "takeOver") throw new Error(action.kind);
      state = action.next;
      epochs.push(state.epoch);
      if (i % 2 === 0) {
        haTime += T + 1; // expire
      } else {
        const released = decide(state, release(`holder-${i}`), haTime, T);
        if (released.kind !== "release") throw new Error(released.kind);
        state = released.next;
      }
    }
    expect(epochs).toEqual([1, 2, 3, 4, 5]);
  });

  it("is pure: the same inputs give the same action and the entry is not modified", () => {
    const current = Object.freeze(entry({ renewedAt: NOW - T - 1 }));
    const first = decide(current, heartbeat("rival"), NOW, T);
    const second = decide(current, heartbeat("rival"), NOW, T);
    expect(first).toEqual(second);
    expect(current).toEqual(entry({ renewedAt: NOW - T - 1 }));
  });
});
