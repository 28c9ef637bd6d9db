import { describe, expect, it } from "vitest";
import type { PrimaryView } from "../../shared/contract/lease-view.js";
import { describeNotElected, untilGivenUp, type Candidate, type NotElected } from "../../shared/cli/election-timeout.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { primaryView } from "../helpers/sdk-fakes.js";

/** A candidate whose events the test emits. */
class FakeCandidate implements Candidate {
  readonly uuid = "me";
  readonly #handlers = new Map<string, Array<(payload: never) => unknown>>();
  on(event: string, handler: (payload: never) => unknown): this {
    this.#handlers.set(event, [...(this.#handlers.get(event) ?? []), handler]);
    return this;
  }
  emit(event: "elected" | "primaryChanged" | "error", payload: unknown): void {
    for (const handler of this.#handlers.get(event) ?? []) (handler as (p: unknown) => unknown)(payload);
  }
}

function watch(timeoutMs: number) {
  const clock = new FakeClock();
  const t0 = clock.now();
  const candidate = new FakeCandidate();
  let outcome: (NotElected & { at: number }) | undefined;
  void untilGivenUp(candidate, timeoutMs, clock).then((given) => (outcome = { ...given, at: clock.now() - t0 }));
  return { clock, candidate, outcome: () => outcome };
}

const other: PrimaryView = primaryView({ uuid: "other", address: "10.0.0.9:1", epoch: 4, expiresInMs: 3000 });

describe("--timeout of elect and run (fake clock)", () => {
  it("gives up exactly when the timeout passes without an election, waiting out another holder meanwhile", async () => {
    const { clock, candidate, outcome } = watch(10_000);
    candidate.emit("primaryChanged", { primary: other });
    candidate.emit("error", new Error("a failed poll"));
    await clock.advance(9_999);
    expect(outcome()).toBeUndefined();
    await clock.advance(1);
    expect(outcome()).toEqual({ reason: "timed-out", afterMs: 10_000, at: 10_000 });
  });

  it("does not give up once elected: the timeout no longer applies", async () => {
    const { clock, candidate, outcome } = watch(10_000);
    await clock.advance(5_000);
    candidate.emit("elected", { uuid: "me", epoch: 1 });
    await clock.advance(60_000);
    expect(outcome()).toBeUndefined();
  });

  it("0 tries once: gives up at the first answer showing another live primary", async () => {
    const { clock, candidate, outcome } = watch(0);
    candidate.emit("primaryChanged", { primary: null }); // free: it goes on to acquire
    candidate.emit("primaryChanged", { primary: primaryView({ uuid: "me" }) }); // itself
    await clock.advance(0);
    expect(outcome()).toBeUndefined();
    candidate.emit("primaryChanged", { primary: other });
    await clock.advance(0);
    expect(outcome()).toMatchObject({ reason: "held", primary: { uuid: "other" } });
    expect(describeNotElected("scheduler", outcome()!)).toBe(
      "scheduler is held by other at 10.0.0.9:1 (epoch 4, 3000 ms left on its lease); --timeout 0 tries once: giving up.",
    );
  });

  it("0 tries once: a failed call gives up; an election first means it won", async () => {
    const failed = watch(0);
    failed.candidate.emit("error", new Error("unreachable"));
    await failed.clock.advance(0);
    expect(failed.outcome()).toMatchObject({ reason: "failed" });

    const won = watch(0);
    won.candidate.emit("elected", { uuid: "me", epoch: 1 });
    won.candidate.emit("primaryChanged", { primary: other });
    won.candidate.emit("error", new Error("later trouble"));
    await won.clock.advance(60_000);
    expect(won.outcome()).toBeUndefined();
  });
});
