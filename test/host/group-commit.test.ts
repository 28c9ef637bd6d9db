import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../shared/host/group-commit.js";
import { settle } from "../helpers/fake-clock.js";

/** A save whose every run is finished by the test, in the order it chooses. */
function controlledSave(): { save: () => Promise<void>; runs: Array<{ succeed(): void; fail(error: Error): void }> } {
  const runs: Array<{ succeed(): void; fail(error: Error): void }> = [];
  return {
    runs,
    save: () =>
      new Promise<void>((resolve, reject) => {
        runs.push({ succeed: resolve, fail: reject });
      }),
  };
}

/** Tracks whether a promise has settled, without awaiting it. */
function watch(promise: Promise<void>): { state: () => "pending" | "resolved" | "rejected" } {
  let state: "pending" | "resolved" | "rejected" = "pending";
  promise.then(
    () => (state = "resolved"),
    () => (state = "rejected"),
  );
  return { state: () => state };
}

describe("GroupCommit", () => {
  it("starts a save at once when none is running, and resolves when it succeeds", async () => {
    const { save, runs } = controlledSave();
    const commit = new GroupCommit(save);
    const flushed = watch(commit.flush());
    await settle();
    expect(runs).toHaveLength(1);
    expect(flushed.state()).toBe("pending");
    runs[0]!.succeed();
    await settle();
    expect(flushed.state()).toBe("resolved");
  });

  it("does not count a save that was already running for a later write; writers during it share one next save", async () => {
    const { save, runs } = controlledSave();
    const commit = new GroupCommit(save);
    const first = watch(commit.flush());
    await settle();
    // Three writes finish while save #1 (which may have read the state before them) runs.
    const late = [watch(commit.flush()), watch(commit.flush()), watch(commit.flush())];
    await settle();
    expect(runs).toHaveLength(1);

    runs[0]!.succeed();
    await settle();
    expect(first.state()).toBe("resolved");
    expect(late.map((flush) => flush.state())).toEqual(["pending", "pending", "pending"]);
    expect(runs, "one save for all three, started when #1 ended").toHaveLength(2);

    runs[1]!.succeed();
    await settle();
    expect(late.map((flush) => flush.state())).toEqual(["resolved", "resolved", "resolved"]);
    expect(runs).toHaveLength(2);
  });

  it("never runs two saves at once", async () => {
    let concurrent = 0;
    let most = 0;
    const commit = new GroupCommit(async () => {
      concurrent += 1;
      most = Math.max(most, concurrent);
      await settle();
      concurrent -= 1;
    });
    const flushes: Array<Promise<void>> = [];
    for (let i = 0; i < 20; i += 1) {
      flushes.push(commit.flush());
      if (i % 3 === 0) await settle();
    }
    await Promise.all(flushes);
    expect(most).toBe(1);
  });

  it("rejects exactly the flushes that waited for a failed save, and starts afresh on the next flush", async () => {
    const { save, runs } = controlledSave();
    const commit = new GroupCommit(save);
    const first = watch(commit.flush());
    await settle();
    const second = watch(commit.flush());
    runs[0]!.succeed();
    await settle();
    runs[1]!.fail(new Error("disk full"));
    await settle();
    expect([first.state(), second.state()]).toEqual(["resolved", "rejected"]);

    const third = watch(commit.flush());
    await settle();
    expect(runs).toHaveLength(3);
    runs[2]!.succeed();
    await settle();
    expect(third.state()).toBe("resolved");
  });

  it("turns a save that throws synchronously into a rejected flush", async () => {
    const commit = new GroupCommit(() => {
      throw new Error("broken adapter");
    });
    await expect(commit.flush()).rejects.toThrow("broken adapter");
    await expect(commit.flush()).rejects.toThrow("broken adapter");
  });
});
