import { describe, expect, it } from "vitest";
import { EndpointFailover, type Attempted, type FailoverCall, type FailoverResult } from "../../shared/sdk/transport/endpoint-failover.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";

/**
 * The endpoint choice of HaClient (docs/sdk.md#several-endpoints) on a manual clock, with
 * attempts the test answers by hand: which endpoint each call goes to, when it moves on,
 * and what the next call learns from it. No sleeps: time moves only in clock.advance().
 */

type Outcome = { kind: "answer" | "unavailable"; status: number } | { kind: "refused" };

interface Sent {
  readonly endpoint: string;
  readonly keys: readonly string[];
  readonly signal: AbortSignal;
  settle(outcome: Outcome): void;
}

class Scene {
  readonly clock = new FakeClock(0);
  readonly failover: EndpointFailover;
  readonly sent: Sent[] = [];
  /** Each endpoint's answer to every attempt from now on; an endpoint without one hangs until the test settles it. */
  readonly answers = new Map<string, Outcome>();

  constructor(endpoints: readonly string[]) {
    this.failover = new EndpointFailover(endpoints, this.clock);
  }

  /** A call of `keys` with a budget of `budgetMs` on the manual clock. */
  call(keys: readonly string[], budgetMs: number, options: { split?: boolean; caller?: AbortSignal } = {}): Promise<FailoverResult<number>> {
    const budget = new AbortController();
    const timer = this.clock.setTimeout(() => budget.abort(), budgetMs);
    const call: FailoverCall<number> = {
      keys,
      deadline: this.clock.now() + budgetMs,
      split: options.split ?? false,
      budget: budget.signal,
      caller: options.caller,
      attempt: (endpoint, signal) =>
        new Promise<Attempted<number>>((resolve, reject) => {
          const settleWith = (outcome: Outcome): void => (outcome.kind === "refused" ? reject(new Error(`connect ECONNREFUSED ${endpoint}`)) : resolve({ kind: outcome.kind, value: outcome.status }));
          signal.addEventListener("abort", () => reject(signal.reason));
          this.sent.push({ endpoint, keys, signal, settle: settleWith });
          const answer = this.answers.get(endpoint);
          if (answer !== undefined) queueMicrotask(() => settleWith(answer));
        }),
    };
    return this.failover.call(call).finally(() => this.clock.clearTimeout(timer));
  }

  endpointsOf(from = 0): string[] {
    return this.sent.slice(from).map((each) => each.endpoint);
  }
}

const A = "http://a/api";
const B = "http://b/api";
const C = "http://c/api";
const OK: Outcome = { kind: "answer", status: 200 };
const REFUSED: Outcome = { kind: "refused" };
const UNAVAILABLE: Outcome = { kind: "unavailable", status: 503 };

describe("EndpointFailover: where each call goes", () => {
  it("with one endpoint, every call goes to it once, as a client of one endpoint always did", async () => {
    const scene = new Scene([A]);
    scene.answers.set(A, REFUSED);
    expect(await scene.call(["k"], 1000)).toMatchObject({ kind: "failed", failures: [{ endpoint: A }] });
    scene.answers.set(A, UNAVAILABLE);
    expect(await scene.call(["k"], 1000)).toEqual({ kind: "answer", value: 503, endpoint: A });
    scene.answers.set(A, OK);
    expect(await scene.call(["k"], 1000)).toEqual({ kind: "answer", value: 200, endpoint: A });
    expect(scene.endpointsOf()).toEqual([A, A, A]);
  });

  it("starts at the first endpoint and sticks to the one that answered last, not round-robin", async () => {
    const scene = new Scene([A, B, C]);
    for (const endpoint of [A, B, C]) scene.answers.set(endpoint, OK);
    for (let i = 0; i < 3; i += 1) expect(await scene.call(["k"], 1000)).toMatchObject({ kind: "answer", endpoint: A });
    expect(scene.endpointsOf()).toEqual([A, A, A]);
  });

  it("moves on within the call on no answer at all (a refused connection), and the next call starts where the answer came from", async () => {
    const scene = new Scene([A, B, C]);
    scene.answers.set(A, REFUSED).set(B, OK).set(C, OK);
    expect(await scene.call(["k"], 1000)).toEqual({ kind: "answer", value: 200, endpoint: B });
    expect(scene.endpointsOf()).toEqual([A, B]);
    // The lost instance is not tried again while the one that answers keeps answering, even once it is back.
    scene.answers.set(A, OK);
    await scene.call(["k"], 1000);
    expect(scene.endpointsOf(2)).toEqual([B]);
    expect(scene.failover.current).toBe(B);
    // The one that answers is lost in turn: on to the next in the list, wrapping round.
    scene.answers.set(B, REFUSED).set(C, REFUSED);
    expect(await scene.call(["k"], 1000)).toMatchObject({ kind: "answer", endpoint: A });
    expect(scene.endpointsOf(3)).toEqual([B, C, A]);
  });

  it("moves on after a 5xx, but never after a 4xx (every instance would answer it alike)", async () => {
    const scene = new Scene([A, B]);
    scene.answers.set(A, UNAVAILABLE).set(B, OK);
    expect(await scene.call(["k"], 1000)).toEqual({ kind: "answer", value: 200, endpoint: B });
    const refused: Outcome = { kind: "answer", status: 401 };
    scene.answers.set(B, refused).set(A, OK);
    expect(await scene.call(["k"], 1000)).toEqual({ kind: "answer", value: 401, endpoint: B });
    expect(scene.endpointsOf()).toEqual([A, B, B]);
  });

  it("asks each endpoint at most once per call: with every one down the call fails once, each failure named", async () => {
    const scene = new Scene([A, B, C]);
    for (const endpoint of [A, B, C]) scene.answers.set(endpoint, REFUSED);
    const result = await scene.call(["k"], 1000);
    expect(result).toMatchObject({ kind: "failed", failures: [{ endpoint: A }, { endpoint: B }, { endpoint: C }] });
    expect(scene.sent).toHaveLength(3);
  });

  it("ends with the service's own 5xx when no endpoint answered better, a 503 before a refused connection included", async () => {
    const scene = new Scene([A, B]);
    scene.answers.set(A, UNAVAILABLE).set(B, REFUSED);
    expect(await scene.call(["k"], 1000)).toEqual({ kind: "answer", value: 503, endpoint: A });
    scene.answers.set(A, { kind: "unavailable", status: 502 }).set(B, UNAVAILABLE);
    // The call started at A again (B failed last); B's 503 is the last 5xx.
    expect(await scene.call(["k"], 1000)).toEqual({ kind: "answer", value: 503, endpoint: B });
  });

  it("a call unanswered within its budget times out there (no second request), and the next call starts at the next endpoint", async () => {
    const scene = new Scene([A, B]);
    const first = scene.call(["k"], 1000);
    await scene.clock.advance(999);
    expect(scene.endpointsOf()).toEqual([A]);
    await scene.clock.advance(1);
    expect(await first).toEqual({ kind: "timed-out", waiting: [A], failures: [] });
    expect(scene.sent[0]!.signal.aborted).toBe(true);
    scene.answers.set(B, OK);
    expect(await scene.call(["k"], 1000)).toMatchObject({ kind: "answer", endpoint: B });
    expect(scene.endpointsOf()).toEqual([A, B]);
  });

  it("a copy of a request still unanswered (a hedged renewal's) goes to the endpoint after the one that request waits on", async () => {
    const scene = new Scene([A, B, C]);
    const cut = new AbortController();
    const renewal = scene.call(["PUT /primary/x"], 3000, { caller: cut.signal });
    await scene.clock.advance(375);
    // Another request meanwhile is no copy: it goes to the current endpoint.
    const other = scene.call(["GET /primary/y"], 1000);
    scene.sent[1]!.settle(OK);
    expect(await other).toMatchObject({ endpoint: A });
    const copy = scene.call(["PUT /primary/x"], 2625, { caller: cut.signal });
    expect(scene.endpointsOf()).toEqual([A, A, B]);
    scene.sent[2]!.settle(OK);
    expect(await copy).toEqual({ kind: "answer", value: 200, endpoint: B });
    // The elector cuts the earlier copy off once one is answered: nothing more is learned from it.
    cut.abort();
    expect(await renewal).toEqual({ kind: "aborted" });
    expect(scene.sent[0]!.signal.aborted).toBe(true);
    expect(scene.failover.current).toBe(B);
  });

  it("a copy asked in a participant heartbeat or through a single route is a copy alike (keys, not routes)", async () => {
    const scene = new Scene([A, B]);
    void scene.call(["PUT /primary/x", "GET /primary/y", "PUT /members/g/m"], 3000);
    await scene.clock.advance(500);
    void scene.call(["PUT /primary/x"], 2500);
    void scene.call(["GET /members/g"], 2500);
    expect(scene.endpointsOf()).toEqual([A, B, A]);
  });

  it("a copy sent while the earlier one waits on the last endpoint wraps round to the first", async () => {
    const scene = new Scene([A, B]);
    void scene.call(["k"], 3000);
    void scene.call(["k"], 3000);
    void scene.call(["k"], 3000);
    expect(scene.endpointsOf()).toEqual([A, B, A]);
  });

  it("split (a call whose caller does not retry): an endpoint silent for its share is joined by the next, the first still awaited", async () => {
    const scene = new Scene([A, B, C]);
    const call = scene.call(["k"], 9000, { split: true });
    await scene.clock.advance(2999);
    expect(scene.endpointsOf()).toEqual([A]);
    await scene.clock.advance(1);
    expect(scene.endpointsOf()).toEqual([A, B]);
    await scene.clock.advance(3000);
    expect(scene.endpointsOf()).toEqual([A, B, C]);
    // The first endpoint answers late: its answer counts, and the others are cut off.
    scene.sent[0]!.settle(OK);
    expect(await call).toEqual({ kind: "answer", value: 200, endpoint: A });
    expect(scene.sent[1]!.signal.aborted && scene.sent[2]!.signal.aborted).toBe(true);
    expect(scene.failover.current).toBe(A);
  });

  it("split: a fast failure moves on at once, and what is left of the budget is shared again", async () => {
    const scene = new Scene([A, B, C]);
    const call = scene.call(["k"], 9000, { split: true });
    await scene.clock.advance(1000);
    scene.sent[0]!.settle(REFUSED);
    await settle();
    expect(scene.endpointsOf()).toEqual([A, B]);
    // 8000 ms left for B and C: B's share is 4000 ms.
    await scene.clock.advance(3999);
    expect(scene.endpointsOf()).toEqual([A, B]);
    await scene.clock.advance(1);
    expect(scene.endpointsOf()).toEqual([A, B, C]);
    await scene.clock.advance(4000);
    expect(await call).toMatchObject({ kind: "timed-out", waiting: [B, C], failures: [{ endpoint: A }] });
  });

  it("the caller's abort cuts every attempt off and teaches nothing: the next call starts where it would have", async () => {
    const scene = new Scene([A, B]);
    const stop = new AbortController();
    const call = scene.call(["k"], 1000, { caller: stop.signal });
    await scene.clock.advance(900);
    stop.abort();
    expect(await call).toEqual({ kind: "aborted" });
    expect(scene.sent[0]!.signal.aborted).toBe(true);
    expect(scene.failover.current).toBe(A);
    // Nothing of the aborted call is left unanswered: the next request of its key is no copy.
    void scene.call(["k"], 1000);
    expect(scene.endpointsOf()).toEqual([A, A]);
  });

  it("an answer that comes after the call ended changes nothing", async () => {
    const scene = new Scene([A, B]);
    const call = scene.call(["k"], 1000);
    await scene.clock.advance(1000);
    expect(await call).toMatchObject({ kind: "timed-out" });
    scene.sent[0]!.settle(OK);
    await settle();
    expect(scene.failover.current).toBe(B);
  });
});
