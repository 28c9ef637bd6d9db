import { afterEach, describe, expect, it, vi } from "vitest";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { FakeClock, COUNTER_ONLY } from "../helpers/fake-clock.js";
import { sendWithHeaders, WALL_START } from "../helpers/route-requests.js";

/**
 * A real PrimaryElector and HaClient against several instances of the real service (the
 * route table and lease service, on one store), all on one manual clock: fetch is replaced
 * by one that hands each request to its instance's runtime, or fails it as a lost
 * instance would (a refused connection, or no answer at all). No sleeps.
 */
const I = 1000;
const T = 5000;
const SECRET = "one-secret-for-every-instance-of-this-service";
const A = "http://head-a.test/api";
const B = "http://head-b.test/api";
const C = "http://head-c.test/api";

type State = "up" | "refusing" | "silent";

interface Sent {
  readonly endpoint: string;
  readonly method: string;
  readonly path: string;
  readonly at: number;
}

class Instances {
  readonly clock = new FakeClock(WALL_START);
  readonly sent: Sent[] = [];
  readonly #runtimes = new Map<string, Runtime>();
  readonly #states = new Map<string, State>();

  constructor(endpoints: readonly string[]) {
    const leases = new MemoryLeaseStore();
    const members = new MemoryMemberStore();
    for (const endpoint of endpoints) {
      this.#runtimes.set(endpoint, createRuntime({ timing: { intervalMs: I, timeoutMs: T }, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases, members, clock: this.clock }));
      this.#states.set(endpoint, "up");
    }
    vi.stubGlobal("fetch", (input: string, init: RequestInit) => this.#fetch(input, init));
  }

  set(endpoint: string, state: State): void {
    this.#states.set(endpoint, state);
  }

  /** Requests sent since `from` (an index into `sent`), as "endpoint METHOD path". */
  since(from: number): string[] {
    return this.sent.slice(from).map(({ endpoint, method, path }) => `${endpoint} ${method} ${path.split("?")[0]}`);
  }

  async #fetch(input: string, init: RequestInit): Promise<Response> {
    const endpoint = [...this.#runtimes.keys()].find((each) => input.startsWith(each));
    if (endpoint === undefined) throw new Error(`no instance at ${input}`);
    const path = input.slice(endpoint.length);
    this.sent.push({ endpoint, method: init.method ?? "GET", path, at: this.clock.now() });
    const signal = init.signal!;
    switch (this.#states.get(endpoint)) {
      case "refusing":
        throw new TypeError("fetch failed", { cause: Object.assign(new Error(`connect ECONNREFUSED ${new URL(endpoint).host}`), { code: "ECONNREFUSED" }) });
      case "silent":
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
      default: {
        const reply = await sendWithHeaders(this.#runtimes.get(endpoint)!, init.method ?? "GET", path, typeof init.body === "string" ? init.body : undefined, undefined, init.headers as Record<string, string>);
        signal.throwIfAborted();
        return new Response(JSON.stringify(reply.body), { status: reply.status, headers: { "content-type": "application/json", ...reply.headers } });
      }
    }
  }
}

interface Watched {
  readonly elector: PrimaryElector;
  readonly elected: number[];
  readonly electedAt: number[];
  readonly demoted: string[];
}

function watch(elector: PrimaryElector, clock: FakeClock): Watched {
  const watched: Watched = { elector, elected: [], electedAt: [], demoted: [] };
  elector.on("elected", ({ epoch }) => {
    watched.elected.push(epoch);
    watched.electedAt.push(clock.now());
  });
  elector.on("demoted", ({ reason }) => void watched.demoted.push(reason));
  elector.on("error", () => undefined);
  return watched;
}

/** stop() waits for calls bounded on the manual clock: the clock moves meanwhile. */
async function stop(clock: FakeClock, ...electors: PrimaryElector[]): Promise<void> {
  const stopped = Promise.all(electors.map((elector) => elector.stop()));
  await run(clock, 2 * T);
  await stopped;
}

/** Advances the clock in steps of `stepMs`, so that the service's answers (promises) keep up with the timers. */
async function run(clock: FakeClock, ms: number, stepMs = 50): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) await clock.advance(Math.min(stepMs, ms - done));
}

describe("several endpoints: a primary keeps its role when the instance it talks to is lost", () => {
  afterEach(() => void vi.unstubAllGlobals());

  for (const lost of ["refusing", "silent"] as const) {
    it(`its instance ${lost === "refusing" ? "killed (connections refused)" : "gone silent (a lost machine)"}: the renewals go to the next one; 0 demotions, the epoch unchanged`, async () => {
      const instances = new Instances([A, B]);
      const client = new HaClient({ endpoint: [A, B], clock: instances.clock });
      const primary = watch(new PrimaryElector({ utype: "scheduler", transport: client, clock: instances.clock, random: () => 0.5 }).start(), instances.clock);
      await run(instances.clock, 3 * I);
      expect(primary.elected).toEqual([1]);
      expect(new Set(instances.since(0).map((line) => line.split(" ")[0]))).toEqual(new Set([A]));

      const mark = instances.sent.length;
      const lostAt = instances.clock.now();
      instances.set(A, lost);
      await run(instances.clock, 6 * T);
      expect(primary.demoted).toEqual([]);
      expect(primary.elected).toEqual([1]);
      expect(primary.elector.isPrimary()).toBe(true);
      expect(primary.elector.epoch).toBe(1);
      // One renewal found A lost, and every call since went to B: the one that answered.
      const afterLoss = instances.since(mark);
      expect(afterLoss[0]).toBe(`${A} PUT /primary/scheduler`);
      expect(afterLoss.slice(1).every((line) => line.startsWith(B))).toBe(true);
      const firstToB = instances.sent.slice(mark).find((each) => each.endpoint === B)!;
      // Killed: in the same call. Silent: when the renewal budget passed (the ceiling, (T − I)/2, before any renewal was answered).
      expect(firstToB.at - lostAt).toBeLessThanOrEqual(lost === "refusing" ? I : I + (T - I) / 2);
      expect(client.endpoint).toBe(B);

      // A comes back and B is lost in turn: back to A, still no demotion.
      instances.set(A, "up");
      instances.set(B, lost);
      await run(instances.clock, 6 * T);
      expect(primary.demoted).toEqual([]);
      expect(primary.elector.epoch).toBe(1);
      expect(client.endpoint).toBe(A);
      await stop(instances.clock, primary.elector);
    });
  }

  it("with one endpoint the same silence demotes it (what the list is for)", async () => {
    const instances = new Instances([A, B]);
    const primary = watch(new PrimaryElector({ utype: "scheduler", transport: new HaClient({ endpoint: A, clock: instances.clock }), clock: instances.clock, random: () => 0.5 }).start(), instances.clock);
    await run(instances.clock, 3 * I);
    instances.set(A, "silent");
    await run(instances.clock, 2 * T);
    expect(primary.demoted).toEqual(["lease-expired"]);
    await stop(instances.clock, primary.elector);
  });

  it("one participant heartbeat per I for every part (a role and its membership) follows the same choice", async () => {
    const instances = new Instances([A, B]);
    const client = new HaClient({ endpoint: `${A},${B}`, clock: instances.clock });
    const primary = watch(new PrimaryElector({ utype: "scheduler", transport: client, clock: instances.clock, random: () => 0.5, membership: { member: "head-a" } }).start(), instances.clock);
    await run(instances.clock, 3 * I);
    expect(primary.elected).toEqual([1]);
    const mark = instances.sent.length;
    instances.set(A, "silent");
    await run(instances.clock, 6 * T);
    expect(primary.demoted).toEqual([]);
    expect(primary.elector.epoch).toBe(1);
    const afterLoss = instances.since(mark);
    expect(afterLoss.filter((line) => line.startsWith(A))).toEqual([`${A} POST /heartbeat`]);
    expect(afterLoss.filter((line) => line === `${B} POST /heartbeat`).length).toBeGreaterThan(20);
    expect(primary.elector.membership!.session.isJoined()).toBe(true);
    await stop(instances.clock, primary.elector);
  });

  it("a standby takes over through the instance that answers when the primary and its instance are lost together", async () => {
    const instances = new Instances([A, B]);
    const first = watch(new PrimaryElector({ utype: "scheduler", transport: new HaClient({ endpoint: [A, B], clock: instances.clock }), clock: instances.clock, random: () => 0.5 }).start(), instances.clock);
    await run(instances.clock, 2 * I);
    const second = watch(new PrimaryElector({ utype: "scheduler", transport: new HaClient({ endpoint: [A, B], clock: instances.clock }), clock: instances.clock, random: () => 0.5 }).start(), instances.clock);
    await run(instances.clock, 2 * I);
    expect(first.elected).toEqual([1]);
    // The head node goes: its instance and its primary with it.
    const lostAt = instances.clock.now();
    instances.set(A, "silent");
    void first.elector.stop();
    await run(instances.clock, 3 * T);
    expect(second.elected).toEqual([2]);
    expect(second.electedAt[0]! - lostAt).toBeLessThanOrEqual(T + I);
    await stop(instances.clock, second.elector);
  });

  it("a service down everywhere is asked per endpoint exactly as hard as one endpoint is: the backoff counts calls, not endpoints", async () => {
    const instances = new Instances([A, B, C]);
    for (const endpoint of [A, B, C]) instances.set(endpoint, "refusing");
    const alone = watch(new PrimaryElector({ utype: "alone", transport: new HaClient({ endpoint: A, clock: instances.clock }), clock: instances.clock, random: () => 0.5 }).start(), instances.clock);
    const three = watch(new PrimaryElector({ utype: "three", transport: new HaClient({ endpoint: [A, B, C], clock: instances.clock }), clock: instances.clock, random: () => 0.5 }).start(), instances.clock);
    await run(instances.clock, 60_000);
    const count = (utype: string, endpoint: string): number => instances.sent.filter((each) => each.endpoint === endpoint && each.path.startsWith(`/primary/${utype}`)).length;
    const calls = count("alone", A);
    expect(calls).toBeGreaterThan(5);
    // Well below one a second: the calls back off (4·I at most apart, jittered) as one endpoint's do.
    expect(calls).toBeLessThan(30);
    expect([count("three", A), count("three", B), count("three", C)]).toEqual([calls, calls, calls]);
    expect(three.elector.stats().failures).toBe(alone.elector.stats().failures);
    await stop(instances.clock, alone.elector, three.elector);
  });
});
