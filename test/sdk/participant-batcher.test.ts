import { describe, expect, it } from "vitest";
import type { ParticipantHeartbeatBody, ParticipantResults } from "../../shared/contract/participant.js";
import type { CallOptions } from "../../shared/sdk/transport/lease-transport.js";
import type { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { UnauthorizedError } from "../../shared/sdk/auth/unauthorized-error.js";
import { align } from "../../shared/sdk/transport/cadence.js";
import { batcherOf, GATHER_WINDOW_MS, MAX_PARTS_PER_LIST, PARTICIPANT_BATCHER } from "../../shared/sdk/transport/participant-batcher.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { leaseView, primaryView } from "../helpers/sdk-fakes.js";

describe("align: a part's wake time on the participant's grid (anchor 0, I = 1000)", () => {
  it.each([
    // at, now, mayDelay, expected
    [3000, 2000, false, 3000], // on the grid already
    [3400, 2000, false, 3000], // pulled forward to the grid point before it, still in the future
    [3940, 2500, false, 3000],
    // Woken 10 ms before the grid point 3000 (its timer fired early) and planned I later: the
    // next grid point, not 3000 again (it would wake at once and call twice).
    [3990, 2990, false, 4000],
    [3980, 2980, true, 4000], // earlyWakeMs (20 at I = 1000) before it: still
    [3979, 2979, false, 3000], // earlier than that: a part planned to wake there, as it asked
    // Woken 3 ms before 3000 and planned later than just before 4000: 3000 is the point it is
    // at, not one ahead of it; a poll goes on the next point, a heartbeat as planned.
    [3900, 2997, true, 4000],
    [3500, 2997, false, 3500],
    [2400, 2000, false, 2400], // the grid point before it (2000) is not in the future: unchanged
    [2400, 2000, true, 2400], // a poll: the next (3000) is more than I/4 later: unchanged
    [2800, 2000, true, 3000], // a poll: the next within I/4: delayed to it
    [2750, 2000, true, 3000], // exactly I/4
    [2800, 2000, false, 2800], // a renewal or heartbeat is never delayed
    [2000, 2000, false, 2000], // due now: now
    [1999, 2000, false, 2000], // overdue: at once (the grid point it is a hair before is now)
    [1900, 2000, false, 1900], // overdue: at once
    [1999, 2000, true, 2000], // an overdue poll: the next grid point is now
  ])("at %d, now %d, mayDelay %s → %d", (at, now, mayDelay, expected) => {
    expect(align({ at, now, anchor: 0, intervalMs: 1000, mayDelay })).toBe(expected);
  });

  it.each([
    // at, now, expected
    [2400, 2000, 2000], // the grid point before it is now: now, with its request
    // A renewal answered after the grid point it would have gone before (sent at 950, answered
    // at 1010): now, back on the grid, rather than at 1950 and alone every I after.
    [1950, 1010, 1010],
    [1950, 1250, 1250], // up to I/4 after the grid point
    [1950, 1251, 1950], // later: unchanged
    [3400, 2000, 3000], // a grid point still ahead: as without mayAdvance
  ])("a renewal after an accepted one (mayAdvance) at %d, now %d → %d", (at, now, expected) => {
    expect(align({ at, now, anchor: 0, intervalMs: 1000, mayDelay: false, mayAdvance: true })).toBe(expected);
  });

  it("counts a time I after a grid point as a grid point in floating point: a renewal sent on the grid is not sent again at once", () => {
    // (5027.085616578763 − 27.08561657876323) / 1000 is 4.999999999999999 in floating point.
    const anchor = 27.08561657876323;
    const sentAt = 4027.085616578763;
    expect(align({ at: sentAt + 1000, now: sentAt, anchor, intervalMs: 1000, mayDelay: false, mayAdvance: true })).toBe(sentAt + 1000);
  });

  it("takes the grid from its anchor", () => {
    expect(align({ at: 3400, now: 2000, anchor: 250, intervalMs: 1000, mayDelay: false })).toBe(3250);
    expect(align({ at: 3100, now: 2300, anchor: 250, intervalMs: 1000, mayDelay: true })).toBe(3250);
  });
});

interface Sent {
  readonly body: ParticipantHeartbeatBody;
  readonly options: CallOptions;
  resolve(results: ParticipantResults): void;
  reject(error: unknown): void;
}

/** A participant transport whose batches wait for the test; single calls are logged and answered at once. */
class ManualTransport {
  readonly batches: Sent[] = [];
  readonly singles: string[] = [];
  participantHeartbeat(body: ParticipantHeartbeatBody, options: CallOptions = {}): Promise<ParticipantResults> {
    return new Promise((resolve, reject) => this.batches.push({ body, options, resolve, reject }));
  }
  getPrimary(utype: string, options: CallOptions = {}): Promise<ReturnType<typeof leaseView>> {
    this.singles.push(`GetPrimary(${utype}) ${options.timeoutInMs}`);
    return Promise.resolve(leaseView(utype, null));
  }
  heartbeat(utype: string): Promise<never> {
    this.singles.push(`UpdateHeartBeat(${utype})`);
    return Promise.reject(new Error("not in this test"));
  }
  release(): Promise<never> {
    return Promise.reject(new Error("not in this test"));
  }
}

function setUp(parts: number): { clock: FakeClock; transport: ManualTransport; part: (index: number) => ReturnType<NonNullable<ReturnType<typeof batcherOf>>["join"]> } {
  const clock = new FakeClock(0);
  const transport = new ManualTransport();
  const batcher = batcherOf(transport)!;
  const joined = Array.from({ length: parts }, () => batcher.join(clock));
  return { clock, transport, part: (index) => joined[index]! };
}

describe("ParticipantBatcher", () => {
  it("sends once every registered part has a call queued; each call settles at its own budget while the batch is out, whose timeout is the largest", async () => {
    const { clock, transport, part } = setUp(2);
    const first = part(0).getPrimary("a", { timeoutInMs: 100 });
    const second = part(1).getPrimary("b", { timeoutInMs: 300 });
    const outcomes: string[] = [];
    first.then(() => outcomes.push("a answered"), (error: Error) => outcomes.push(`${clock.now()} ${error.message}`));
    second.then(() => outcomes.push("b answered"), (error: Error) => outcomes.push(`${clock.now()} ${error.message}`));
    await clock.advance(0);
    expect(transport.batches.map((batch) => batch.body)).toEqual([{ reads: [{ utype: "a" }, { utype: "b" }] }]);
    expect(transport.batches[0]!.options.timeoutInMs).toBe(300);
    await clock.advance(100);
    expect(outcomes).toEqual(["100 GetPrimary(a): no answer within 100 ms."]);
    expect(transport.batches[0]!.options.abortSignal!.aborted).toBe(false);
    await clock.advance(200);
    expect(outcomes).toEqual(["100 GetPrimary(a): no answer within 100 ms.", "300 GetPrimary(b): no answer within 300 ms."]);
    // Nobody waits for it any more: the request is cut off.
    expect(transport.batches[0]!.options.abortSignal!.aborted).toBe(true);
  });

  it("honours each call's abort signal on its own; the others still get their answers", async () => {
    const { clock, transport, part } = setUp(2);
    const controller = new AbortController();
    const first = part(0).getPrimary("a", { timeoutInMs: 1000, abortSignal: controller.signal });
    const second = part(1).getPrimary("b", { timeoutInMs: 1000 });
    await clock.advance(0);
    controller.abort(new Error("stopped"));
    await expect(first).rejects.toThrow("stopped");
    transport.batches[0]!.resolve({ roles: [], reads: [{ ok: true, value: leaseView("a", null) }, { ok: true, value: leaseView("b", primaryView({ uuid: "x" })) }], members: [], groups: [] });
    expect((await second).primary?.uuid).toBe("x");
  });

  it("a call alone after the gather window goes through its own route, with what is left of its budget", async () => {
    const { clock, transport, part } = setUp(2);
    const alone = part(0).getPrimary("a", { timeoutInMs: 500 });
    await clock.advance(GATHER_WINDOW_MS - 1);
    expect(transport.singles).toEqual([]);
    await clock.advance(1);
    expect((await alone).utype).toBe("a");
    expect(transport.singles).toEqual([`GetPrimary(a) ${500 - GATHER_WINDOW_MS}`]);
    expect(transport.batches).toEqual([]);
  });

  it("waits for a part due at the same grid point whose call comes a little late, but not for a part known to wake later", async () => {
    const { clock, transport, part } = setUp(3);
    // All three on a grid of I = 1000 anchored at 1000: parts 0 and 1 wake at 1000, part 2 at 2000.
    expect(part(0).align(1000, 1000, false)).toBe(1000);
    expect(part(1).align(1000, 1000, false)).toBe(1000);
    expect(part(2).align(2000, 1000, false)).toBe(2000);
    await clock.advance(1000);
    void part(0).getPrimary("a", { timeoutInMs: 500 });
    // Part 1's timer fires late (a busy event loop): its call is still taken into the batch.
    await clock.advance(GATHER_WINDOW_MS - 1);
    expect(transport.batches).toEqual([]);
    expect(transport.singles).toEqual([]);
    void part(1).getPrimary("b", { timeoutInMs: 500 });
    await clock.advance(0);
    // Part 2 wakes later: the batch left as soon as both due parts had called.
    expect(transport.batches.map((batch) => batch.body)).toEqual([{ reads: [{ utype: "a" }, { utype: "b" }] }]);
  });

  it("waits for a part due at the grid point when another part's timer fired a few ms before it", async () => {
    const { clock, transport, part } = setUp(3);
    expect(part(0).align(1000, 1000, false)).toBe(1000);
    expect(part(1).align(1000, 1000, false)).toBe(1000);
    expect(part(2).align(2000, 1000, false)).toBe(2000);
    // Part 0's timer fires 12 ms early (Node's timers may, on performance.now()); part 1's on time.
    await clock.advance(988);
    void part(0).getPrimary("a", { timeoutInMs: 500 });
    await clock.advance(0);
    expect(transport.singles).toEqual([]);
    await clock.advance(12);
    void part(1).getPrimary("b", { timeoutInMs: 500 });
    await clock.advance(0);
    expect(transport.singles).toEqual([]);
    expect(transport.batches.map((batch) => batch.body)).toEqual([{ reads: [{ utype: "a" }, { utype: "b" }] }]);
  });

  it("sends a call at once when every other part is known to wake later (a retry between grid points)", async () => {
    const { clock, transport, part } = setUp(3);
    part(1).align(2000, 1000, false);
    part(2).align(2000, 1000, false);
    const alone = part(0).getPrimary("a", { timeoutInMs: 500 });
    await clock.advance(0);
    expect(transport.singles).toEqual(["GetPrimary(a) 500"]);
    expect((await alone).utype).toBe("a");
  });

  it("does not batch more parts than one request carries in a list: each call goes its own way at once, and no wake time moves", async () => {
    const { clock, transport, part } = setUp(MAX_PARTS_PER_LIST + 1);
    expect(part(0).align(3400, 1000, false)).toBe(3400);
    const alone = part(0).getPrimary("a", { timeoutInMs: 500 });
    expect(transport.singles).toEqual(["GetPrimary(a) 500"]);
    expect((await alone).utype).toBe("a");
    await clock.advance(GATHER_WINDOW_MS);
    expect(transport.batches).toEqual([]);
  });

  it("a batch failing as a whole fails each call with the same kind of error, named for the call", async () => {
    const { clock, transport, part } = setUp(2);
    const calls = [part(0).getPrimary("a", { timeoutInMs: 1000 }), part(1).heartbeat("b", { uuid: "u" }, { timeoutInMs: 1000 })];
    await clock.advance(0);
    transport.batches[0]!.reject(new UnauthorizedError("ParticipantHeartbeat", "http://x/api", undefined));
    const errors = await Promise.all(calls.map((call) => call.then(() => undefined, (error: unknown) => error)));
    expect(errors).toEqual([expect.any(UnauthorizedError), expect.any(UnauthorizedError)]);
    expect(errors.map((error) => (error as HaRequestError).message)).toEqual([
      expect.stringMatching(/^GetPrimary\(a\): ParticipantHeartbeat: 401/),
      expect.stringMatching(/^UpdateHeartBeat\(b\): ParticipantHeartbeat: 401/),
    ]);
    expect(errors.map((error) => (error as HaRequestError).retryable)).toEqual([false, false]);
  });

  it("sends a utype twice in two requests, never in one; a part that left is not waited for", async () => {
    const { clock, transport, part } = setUp(3);
    void part(0).getPrimary("a", { timeoutInMs: 1000 }).catch(() => undefined);
    void part(1).getPrimary("a", { timeoutInMs: 1000 }).catch(() => undefined);
    part(2).leave();
    void part(2).getPrimary("c", { timeoutInMs: 1000 }).catch(() => undefined);
    await clock.advance(GATHER_WINDOW_MS);
    // The first went alone (the second's utype was in its batch), the second waited its window.
    expect(transport.singles).toEqual(["GetPrimary(a) 1000", `GetPrimary(c) 1000`, `GetPrimary(a) ${1000 - GATHER_WINDOW_MS}`]);
  });

  it("a transport may carry its own batcher, or none", () => {
    const transport = new ManualTransport();
    expect(batcherOf(transport)).toBe(batcherOf(transport));
    expect(batcherOf(Object.assign(new ManualTransport(), { [PARTICIPANT_BATCHER]: null }))).toBeUndefined();
    expect(batcherOf({ getPrimary: () => undefined })).toBeUndefined();
  });
});
