import { describe, expect, it } from "vitest";
import type { LeaseView } from "../../shared/contract/lease-view.js";
import { watchPrimary } from "../../shared/cli/primary-watch.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { leaseView, primaryView } from "../helpers/sdk-fakes.js";

const I = 1000;

/** A watch over a scripted GetPrimary: each poll takes the next answer, at the fake clock's time. */
function setup(answers: Array<LeaseView | Error>) {
  const clock = new FakeClock();
  const t0 = clock.now();
  const polls: number[] = [];
  const printed: Array<{ at: number; view: LeaseView }> = [];
  const failures: Error[] = [];
  const stop = new AbortController();
  let keepGoing = true;
  const done = watchPrimary({
    getPrimary: async () => {
      polls.push(clock.now() - t0);
      const answer = answers.shift() ?? answers.at(-1) ?? new Error("no more answers");
      if (answer instanceof Error) throw answer;
      return answer;
    },
    utype: "scheduler",
    clock,
    onChange: (view) => printed.push({ at: clock.now() - t0, view }),
    onFailure: (error) => {
      failures.push(error);
      return keepGoing;
    },
    abortSignal: stop.signal,
  });
  return { clock, polls, printed, failures, stop, done, giveUp: () => (keepGoing = false) };
}

describe("primary --watch (fake clock)", () => {
  const holder = (expiresInMs: number, uuid = "a", epoch = 1) => leaseView("scheduler", primaryView({ uuid, epoch, expiresInMs }));

  it("prints the first view, then only changes of holder, polling every I", async () => {
    const { clock, polls, printed, stop, done } = setup([leaseView("scheduler", null), holder(5000), holder(5000), holder(5000, "b", 2)]);
    await clock.advance(3 * I);
    expect(polls).toEqual([0, I, 2 * I, 3 * I]);
    expect(printed.map(({ at, view }) => [at, view.primary?.uuid ?? null, view.epoch])).toEqual([
      [0, null, 0],
      [I, "a", 1],
      [3 * I, "b", 2],
    ]);
    stop.abort();
    expect(await done).toBe("stopped");
  });

  it("looks again just after a lease would expire, not up to I later", async () => {
    // The holder stopped renewing: 300 ms left at the first poll, so the next poll is at 301.
    const { clock, polls, printed } = setup([holder(300), leaseView("scheduler", null, undefined, 1)]);
    await clock.advance(301);
    expect(polls).toEqual([0, 301]);
    expect(printed.at(-1)).toMatchObject({ at: 301, view: { primary: null, epoch: 1 } });
  });

  it("a failed poll is reported and retried after I; one it cannot fix ends the watch", async () => {
    const { clock, polls, printed, failures, done, giveUp } = setup([new Error("down"), leaseView("scheduler", null), new Error("401")]);
    await clock.advance(I);
    expect(failures.map((error) => error.message)).toEqual(["down"]);
    expect(printed).toHaveLength(1);
    giveUp();
    await clock.advance(I);
    expect(polls).toEqual([0, I, 2 * I]);
    expect(await done).toBe("failed");
    await clock.advance(5 * I);
    expect(polls).toHaveLength(3);
  });
});
