import { describe, expect, it } from "vitest";
import { InvocationContext } from "../../shared/http/azure-functions.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import { LOAD_SHED_MIN_AT_HAND, UNKNOWN_LOAD, type ProcessLoad } from "../../shared/service/admission.js";
import { METER_NAME } from "../../shared/http/metric-names.js";
import { createPrometheusMetrics, type PrometheusMetrics } from "../../shared/host/prometheus-metrics.js";
import { countsBy } from "../helpers/prometheus-text.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";
import { errorCodeOf, sendWithHeaders, WALL_START, type Reply } from "../helpers/route-requests.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "overload-shedding-test-secret-0123456789";

/**
 * A memory store whose calls wait until the test lets them through: the store "falls
 * behind" on demand, and the test sees exactly which requests reached it, in what order.
 */
class SlowStore {
  readonly inner = new MemoryLeaseStore();
  readonly arrived: string[] = [];
  #held: (() => void)[] = [];
  slow = false;

  readonly store: LeaseStore = {
    kind: "table",
    read: (utype, options) => this.#after(`read ${utype}`, () => this.inner.read(utype, options)),
    create: (lease, options, also) => this.#after(`create ${lease.utype}`, () => this.inner.create(lease, options, also)),
    replace: (lease, etag, options, also) => this.#after(`replace ${lease.utype}`, () => this.inner.replace(lease, etag, options, also)),
    renew: (utype, renewal, etag, options) => this.#after(`renew ${utype}`, () => this.inner.renew(utype, renewal, etag, options)),
    list: (options) => this.#after("list", () => this.inner.list(options)),
    ping: (options) => this.#after("ping", () => this.inner.ping(options)),
    readTerms: (utype, options) => this.#after(`readTerms ${utype}`, () => this.inner.readTerms(utype, options)),
    upsertStandby: (...args) => this.inner.upsertStandby(...args),
    readStandbys: (...args) => this.inner.readStandbys(...args),
    listStandbys: (...args) => this.inner.listStandbys(...args),
    deleteStandby: (...args) => this.inner.deleteStandby(...args),
  };

  async #after<T>(what: string, call: () => Promise<T>): Promise<T> {
    this.arrived.push(what);
    if (this.slow) await new Promise<void>((resolve) => this.#held.push(resolve));
    return call();
  }

  /** Lets every held call go on. */
  catchUp(): void {
    this.slow = false;
    for (const resume of this.#held.splice(0)) resume();
  }
}

function setUp(
  admission: { maxInFlight: number; maxQueued: number; shedBusyFraction?: number; shedDelayMs?: number } | undefined,
  load: ProcessLoad = UNKNOWN_LOAD,
  metrics?: PrometheusMetrics,
): { runtime: Runtime; slow: SlowStore } {
  const slow = new SlowStore();
  const bounds = admission === undefined ? undefined : { shedBusyFraction: undefined, shedDelayMs: undefined, ...admission };
  const runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 60_000, leaseSecret: SECRET, admission: bounds }, { leases: slow.store, clock: new FakeClock(WALL_START), telemetry: { load, ...(metrics === undefined ? {} : { meter: metrics.meter }) } });
  return { runtime, slow };
}

/** Starts a request without waiting for it, noting when it was answered. */
function start(runtime: Runtime, method: string, path: string, body?: unknown): { reply: Promise<Reply & { headers: Record<string, string> }>; answered: () => boolean } {
  let done = false;
  const reply = sendWithHeaders(runtime, method, path, body).finally(() => {
    done = true;
  });
  return { reply, answered: () => done };
}

async function leaseOf(runtime: Runtime, utype: string, uuid: string): Promise<string> {
  const reply = await sendWithHeaders(runtime, "PUT", `/primary/${utype}`, { uuid });
  expect(reply.status).toBe(200);
  return reply.body["lease"] as string;
}

describe("shedding before the store falls behind (HA_MAX_IN_FLIGHT, HA_MAX_QUEUED)", () => {
  it("past the bound, a poll is answered 503 Overloaded with Retry-After at once, without reaching the store", async () => {
    const { runtime, slow } = setUp({ maxInFlight: 2, maxQueued: 4 });
    slow.slow = true;
    // Two at the store, two waiting (polls may fill half of the queue): all four are kept.
    const kept = ["a", "b", "c", "d"].map((utype) => start(runtime, "GET", `/primary/${utype}`));
    await settle();
    expect(slow.arrived).toEqual(["read a", "read b"]);
    // Not logged: a refusal is the design working, not a fault.
    const logged: string[] = [];
    const shed = await sendWithHeaders(runtime, "GET", "/primary/e", undefined, new InvocationContext({ logHandler: (level, ...args) => void logged.push(`${level}: ${args.map(String).join(" ")}`) }));
    expect(shed.status).toBe(503);
    expect(errorCodeOf(shed)).toBe("Overloaded");
    expect(shed.headers["retry-after"]).toBe("1");
    expect(logged).toEqual([]);
    expect(slow.arrived).toEqual(["read a", "read b"]);
    expect(kept.some((request) => request.answered())).toBe(false);
    slow.catchUp();
    const replies = await Promise.all(kept.map((request) => request.reply));
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200]);
    // The queued ones went to the store in their order, once a slot was free.
    expect(slow.arrived).toEqual(["read a", "read b", "read c", "read d"]);
  });

  it("a renewal with its token goes before queued polls, and past half the queue it still waits where a poll is shed", async () => {
    const { runtime, slow } = setUp({ maxInFlight: 1, maxQueued: 4 });
    const lease = await leaseOf(runtime, "held", "holder");
    slow.arrived.length = 0;
    slow.slow = true;
    const first = start(runtime, "GET", "/primary/p0");
    const polls = ["p1", "p2"].map((utype) => start(runtime, "GET", `/primary/${utype}`));
    await settle();
    // Half the queue (2) holds polls: a third poll and an acquisition are shed ...
    expect((await sendWithHeaders(runtime, "GET", "/primary/p3")).status).toBe(503);
    const acquisition = await sendWithHeaders(runtime, "PUT", "/primary/other", { uuid: "newcomer" });
    expect(errorCodeOf(acquisition)).toBe("Overloaded");
    // ... but the holder's renewal waits, and is served before the polls queued ahead of it.
    const renewal = start(runtime, "PUT", "/primary/held", { uuid: "holder", lease });
    await settle();
    expect(renewal.answered()).toBe(false);
    slow.catchUp();
    expect((await renewal.reply).status).toBe(200);
    await Promise.all([first.reply, ...polls.map((poll) => poll.reply)]);
    expect(slow.arrived).toEqual(["read p0", "renew held", "read p1", "read p2"]);
  });

  it("a renewal arriving at a full queue takes the place of the newest waiting poll, which is shed", async () => {
    const { runtime, slow } = setUp({ maxInFlight: 1, maxQueued: 2 });
    const lease = await leaseOf(runtime, "held", "holder");
    slow.arrived.length = 0;
    slow.slow = true;
    const first = start(runtime, "GET", "/primary/p0");
    const queuedPoll = start(runtime, "GET", "/primary/p1");
    await settle();
    const renewals = [start(runtime, "PUT", "/primary/held", { uuid: "holder", lease })];
    await settle();
    // The queue (2) holds the poll and the renewal; a poll is refused outright.
    expect(queuedPoll.answered()).toBe(false);
    expect((await sendWithHeaders(runtime, "GET", "/primary/p2")).status).toBe(503);
    // A second renewal (a retry of the first) finds the queue full: the waiting poll makes room.
    renewals.push(start(runtime, "PUT", "/primary/held", { uuid: "holder", lease }));
    const shed = await queuedPoll.reply;
    expect(shed.status).toBe(503);
    expect(errorCodeOf(shed)).toBe("Overloaded");
    slow.catchUp();
    await first.reply;
    expect((await Promise.all(renewals.map((renewal) => renewal.reply))).map((reply) => reply.status)).toEqual([200, 200]);
    expect(slow.arrived).not.toContain("read p1");
  });

  it("without bounds (HA_MAX_IN_FLIGHT=0) every request waits for the store: nothing is shed", async () => {
    const { runtime, slow } = setUp(undefined);
    slow.slow = true;
    const requests = Array.from({ length: 20 }, (_, index) => start(runtime, "GET", `/primary/r${index}`));
    await settle();
    expect(slow.arrived).toHaveLength(20);
    slow.catchUp();
    expect(new Set((await Promise.all(requests.map((request) => request.reply))).map((reply) => reply.status))).toEqual(new Set([200]));
  });

  it("a member heartbeat with its token counts as a renewal: past half the queue it waits where a join is shed", async () => {
    const { runtime, slow } = setUp({ maxInFlight: 1, maxQueued: 4 });
    slow.slow = true;
    const polls = ["p0", "p1", "p2"].map((utype) => start(runtime, "GET", `/primary/${utype}`));
    await settle();
    const join = await sendWithHeaders(runtime, "PUT", "/members/g/m", { session: "s1" });
    expect(errorCodeOf(join)).toBe("Overloaded");
    const renewal = start(runtime, "PUT", "/members/g/m", { session: "s1", token: "the-token-of-its-last-answer" });
    await settle();
    expect(renewal.answered()).toBe(false);
    slow.catchUp();
    // Admitted: what it gets then is the member store's answer (none here), not a refusal.
    expect(errorCodeOf(await renewal.reply)).not.toBe("Overloaded");
    await Promise.all(polls.map((poll) => poll.reply));
  });

  it("membership shares the bound: a member list past it is shed as well", async () => {
    const { runtime, slow } = setUp({ maxInFlight: 1, maxQueued: 2 });
    slow.slow = true;
    const kept = [start(runtime, "GET", "/primary/a"), start(runtime, "GET", "/primary/b")];
    await settle();
    const members = await sendWithHeaders(runtime, "GET", "/members/g");
    expect(errorCodeOf(members)).toBe("Overloaded");
    slow.catchUp();
    await Promise.all(kept.map((request) => request.reply));
  });
});

describe("shedding while the process is saturated: busy running its own work (HA_SHED_BUSY_PERCENT) or every request delayed (HA_SHED_DELAY_MS)", () => {
  /** A process load the test sets; the gate reads it at each request. */
  type Load = { busy: number | undefined; delay: number | undefined };
  const loadOf = (load: Load): ProcessLoad => ({ busyFraction: () => load.busy, delayMs: () => load.delay });
  const BOTH_RULES = { maxInFlight: 64, maxQueued: 256, shedBusyFraction: 0.9, shedDelayMs: 200 };

  /** Holds `count` polls at the store (bounds far from reached), so that many are at hand. */
  async function atHand(runtime: Runtime, slow: SlowStore, count: number): Promise<ReturnType<typeof start>[]> {
    slow.slow = true;
    const held = Array.from({ length: count }, (_, index) => start(runtime, "GET", `/primary/h${index}`));
    await settle();
    expect(slow.arrived.filter((call) => /^read h[0-9]/.test(call))).toHaveLength(count);
    return held;
  }

  it.each([
    ["busy past its limit", { busy: 0.97, delay: 3 }, /busy running its own work 97 % of the last half second; the limit is 90 %/],
    ["delayed past its budget", { busy: 0.5, delay: 340 }, /waited 340 ms on average over the last half second to be served; the budget is 200 ms/],
  ] as const)("%s, a poll, an acquisition and a list are refused at once with Retry-After and the figure, before the store; a renewal is served", async (_rule, over, message) => {
    const load: Load = { busy: 0.2, delay: 1 };
    const { runtime, slow } = setUp(BOTH_RULES, loadOf(load));
    const lease = await leaseOf(runtime, "held", "holder");
    const held = await atHand(runtime, slow, LOAD_SHED_MIN_AT_HAND);
    Object.assign(load, over);
    const before = slow.arrived.length;
    // Refused at once: answered without the store moving (a poll let through would hang here).
    const refused = ["GET /primary/p", "PUT /primary/new", "GET /members/g"].map((call) => {
      const [method, path] = call.split(" ") as [string, string];
      return start(runtime, method, path, method === "PUT" ? { uuid: "newcomer" } : undefined);
    });
    await settle();
    expect(refused.map((request) => request.answered())).toEqual([true, true, true]);
    const [poll, acquisition, members] = await Promise.all(refused.map((request) => request.reply));
    expect(poll!.status).toBe(503);
    expect(errorCodeOf(poll!)).toBe("Overloaded");
    expect(poll!.headers["retry-after"]).toBe("1");
    expect(JSON.stringify(poll!.body)).toMatch(message);
    expect(errorCodeOf(acquisition!)).toBe("Overloaded");
    expect(errorCodeOf(members!)).toBe("Overloaded");
    expect(slow.arrived.length).toBe(before);
    // The holder's renewal goes to the store like any other day.
    const renewal = start(runtime, "PUT", "/primary/held", { uuid: "holder", lease });
    await settle();
    expect(slow.arrived.at(-1)).toBe("renew held");
    slow.catchUp();
    expect((await renewal.reply).status).toBe(200);
    await Promise.all(held.map((request) => request.reply));
  });

  it("below both limits, with fewer than LOAD_SHED_MIN_AT_HAND requests at hand, not known yet, or with a rule off, a poll is served", async () => {
    const cases: [string, Load, { shedBusyFraction?: number; shedDelayMs?: number }, number][] = [
      ["busy just under its limit, delay at its budget", { busy: 0.89, delay: 200 }, { shedBusyFraction: 0.9, shedDelayMs: 200 }, LOAD_SHED_MIN_AT_HAND],
      ["no whole window seen yet", { busy: undefined, delay: undefined }, { shedBusyFraction: 0.9, shedDelayMs: 200 }, LOAD_SHED_MIN_AT_HAND],
      ["saturated, but few requests at hand: slowed by something else", { busy: 1, delay: 5_000 }, { shedBusyFraction: 0.9, shedDelayMs: 200 }, LOAD_SHED_MIN_AT_HAND - 1],
      ["busy, but HA_SHED_BUSY_PERCENT=0", { busy: 1, delay: 3 }, { shedDelayMs: 200 }, LOAD_SHED_MIN_AT_HAND],
      ["delayed, but HA_SHED_DELAY_MS=0", { busy: 0.3, delay: 5_000 }, { shedBusyFraction: 0.9 }, LOAD_SHED_MIN_AT_HAND],
    ];
    for (const [name, load, rules, count] of cases) {
      const { runtime, slow } = setUp({ maxInFlight: 64, maxQueued: 256, ...rules }, loadOf(load));
      const held = await atHand(runtime, slow, count);
      const poll = start(runtime, "GET", "/primary/p");
      await settle();
      expect(slow.arrived.at(-1), name).toBe("read p");
      slow.catchUp();
      expect((await poll.reply).status, name).toBe(200);
      await Promise.all(held.map((request) => request.reply));
    }
  });

  it("counts every refusal by reason (ha.requests.shed): queue when too many wait for the store, busy, delay", async () => {
    const load: Load = { busy: 0.1, delay: 1 };
    const metrics = createPrometheusMetrics(METER_NAME);
    const { runtime, slow } = setUp({ maxInFlight: 2, maxQueued: 4, shedBusyFraction: 0.9, shedDelayMs: 200 }, loadOf(load), metrics);
    // Two at the store and two waiting (half the queue): the fifth poll is refused for the queue.
    slow.slow = true;
    const held = ["h0", "h1", "h2", "h3"].map((utype) => start(runtime, "GET", `/primary/${utype}`));
    await settle();
    expect(slow.arrived).toEqual(["read h0", "read h1"]);
    expect((await sendWithHeaders(runtime, "GET", "/primary/q")).status).toBe(503);
    load.busy = 0.95;
    expect((await sendWithHeaders(runtime, "GET", "/primary/b0")).status).toBe(503);
    load.busy = 0.1;
    load.delay = 450;
    expect((await sendWithHeaders(runtime, "GET", "/primary/b1")).status).toBe(503);
    expect((await sendWithHeaders(runtime, "GET", "/members/g")).status).toBe(503);
    expect(countsBy(await metrics.text(), "ha_requests_shed_total", "ha_shed_reason")).toEqual({ queue: 1, busy: 1, delay: 2 });
    slow.catchUp();
    await Promise.all(held.map((request) => request.reply));
  });
});
