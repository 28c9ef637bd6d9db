import { beforeEach, describe, expect, it } from "vitest";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { errorCodeOf, primaryOf, send, WALL_START } from "../helpers/route-requests.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";

/**
 * A store that comes back without its last writes (docs/design/epochs.md): the service's
 * epochs never repeat, the erased term's holder is told at its next renewal, and a standby
 * takes the role under an epoch above every epoch handed out before the loss.
 */
describe("a store that forgets its last writes", () => {
  let clock: FakeClock;
  let store: MemoryLeaseStore;
  let runtime: Runtime;

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
    store = new MemoryLeaseStore();
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { leases: store, clock });
  });

  const put = (uuid: string, lease?: string): ReturnType<typeof send> => send(runtime, "PUT", "/primary/scheduler", { uuid, ...(lease === undefined ? {} : { lease }) });
  const leaseOf = (reply: { body: Record<string, unknown> }): string => reply.body["lease"] as string;
  const epochOf = (reply: Awaited<ReturnType<typeof send>>): number => primaryOf(reply)!["epoch"] as number;

  /** a holds, the store is copied, then `lost` takeovers happen (each holder dies); returns the epochs granted and the last holder's token. */
  async function takeoversAfterCopy(lost: number): Promise<{ before: number; granted: number[]; last: { uuid: string; lease: string } }> {
    const a = await put("a");
    expect(a.status).toBe(200);
    let last = { uuid: "a", lease: leaseOf(a) };
    const granted = [epochOf(a)];
    const copy = store.snapshot();
    for (let i = 1; i <= lost; i++) {
      await clock.advance(TIMING.timeoutMs + 1);
      const next = await put(`t${i}`);
      expect(next.status).toBe(200);
      granted.push(epochOf(next));
      last = { uuid: `t${i}`, lease: leaseOf(next) };
    }
    await clock.advance(500);
    // The last holder is alive and renewing up to the loss.
    expect((await put(last.uuid, last.lease)).status).toBe(200);
    store.restore(copy);
    await clock.advance(100);
    return { before: epochOf(a), granted, last };
  }

  it.each([1, 2, 5])("losing %i takeover(s): the erased holder is refused at its next renewal, and the next term's epoch is above every epoch handed out", async (lost) => {
    const { granted, last } = await takeoversAfterCopy(lost);
    // The erased term's holder renews with its token: 409 LeaseRevoked, it must stop now.
    const refused = await put(last.uuid, last.lease);
    expect(refused.status).toBe(409);
    expect(errorCodeOf(refused)).toBe("LeaseRevoked");
    // ... and again: it never starts another term under that uuid.
    await clock.advance(TIMING.timeoutMs + 1);
    expect((await put(last.uuid, last.lease)).status).toBe(409);
    // The restored entry still names a (dead, expired) holder: a standby takes over.
    const standby = await put("s");
    expect(standby.status).toBe(200);
    const epoch = epochOf(standby);
    for (const used of granted) expect(epoch).toBeGreaterThan(used);
    // The history never shows one epoch twice (a gap where the lost terms were).
    const history = await send(runtime, "GET", "/primary/scheduler/history");
    const epochs = (history.body["terms"] as Array<{ epoch: number }>).map((term) => term.epoch);
    expect(new Set(epochs).size).toBe(epochs.length);
    expect(epochs[0]).toBe(epoch);
  });

  it("a store restored from before the role's first term: the erased holder is refused, nothing is created for it; a standby starts above its epoch", async () => {
    const empty = store.snapshot();
    const a = await put("a");
    await clock.advance(1000);
    store.restore(empty);
    const refused = await put("a", leaseOf(a));
    expect(errorCodeOf(refused)).toBe("LeaseRevoked");
    expect((await send(runtime, "GET", "/primary/scheduler")).body).toMatchObject({ primary: null, epoch: 0 });
    const standby = await put("s");
    expect(epochOf(standby)).toBeGreaterThan(epochOf(a));
  });

  it("a restore that keeps the live holder's term (only its renewals lost): it renews on, under the same epoch", async () => {
    const a = await put("a");
    const copy = store.snapshot();
    await clock.advance(1000);
    const renewed = await put("a", leaseOf(a));
    store.restore(copy);
    await clock.advance(1000);
    // Its token's ETag is gone with the lost renewal: the slow path renews it, same epoch.
    const again = await put("a", leaseOf(renewed));
    expect(again.status).toBe(200);
    expect(epochOf(again)).toBe(epochOf(a));
  });
});
