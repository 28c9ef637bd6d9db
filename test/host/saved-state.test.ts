import { describe, expect, it } from "vitest";
import { SavedState } from "../../shared/host/saved-state.js";
import { settle } from "../helpers/fake-clock.js";

/**
 * A fake database: `value` is the in-memory state, `disk` what the last successful save
 * wrote. Each save copies `value` when it starts and is finished by the test.
 */
function fakeDatabase() {
  const db = {
    value: 0,
    disk: 0,
    saves: [] as Array<{ succeed(): void; fail(): void }>,
  };
  const save = (): Promise<void> => {
    const snapshot = db.value;
    return new Promise<void>((resolve, reject) => {
      db.saves.push({
        succeed: () => {
          db.disk = snapshot;
          resolve();
        },
        fail: () => reject(new Error("disk full")),
      });
    });
  };
  return { db, state: new SavedState(save) };
}

function watch<T>(promise: Promise<T>): { state: () => "pending" | "resolved" | "rejected" } {
  let state: "pending" | "resolved" | "rejected" = "pending";
  promise.then(
    () => (state = "resolved"),
    () => (state = "rejected"),
  );
  return { state: () => state };
}

describe("SavedState", () => {
  it("answers at once, without a save, when nothing is unsaved", async () => {
    const { db, state } = fakeDatabase();
    await state.settle();
    expect(db.saves).toHaveLength(0);
  });

  it("holds a write's answer until a save that holds the write has succeeded", async () => {
    const { db, state } = fakeDatabase();
    db.value = 1;
    state.changed();
    const answer = watch(state.settle());
    await settle();
    expect(db.saves).toHaveLength(1);
    expect(answer.state()).toBe("pending");
    db.saves[0]!.succeed();
    await settle();
    expect(answer.state()).toBe("resolved");
    expect(db.disk).toBe(1);
  });

  it("holds a read that may have seen an unsaved write until that write is saved", async () => {
    const { db, state } = fakeDatabase();
    db.value = 1;
    state.changed();
    const write = watch(state.settle());
    await settle();
    // A write lands while the first save runs; a read then sees it.
    db.value = 2;
    state.changed();
    const read = watch(state.settle());
    db.saves[0]!.succeed();
    await settle();
    expect(write.state()).toBe("resolved");
    expect(read.state(), "the running save started before the second write").toBe("pending");
    db.saves[1]!.succeed();
    await settle();
    expect(read.state()).toBe("resolved");
    expect(db.disk).toBe(2);
  });

  it("after a failed save fails every answer until a save succeeds, which writes everything", async () => {
    const { db, state } = fakeDatabase();
    db.value = 1;
    state.changed();
    const write = watch(state.settle());
    await settle();
    db.saves[0]!.fail();
    await settle();
    expect(write.state()).toBe("rejected");

    const read = watch(state.settle());
    await settle();
    expect(db.saves, "a read retries the save").toHaveLength(2);
    db.saves[1]!.fail();
    await settle();
    expect(read.state()).toBe("rejected");

    const again = watch(state.settle());
    await settle();
    db.saves[2]!.succeed();
    await settle();
    expect(again.state()).toBe("resolved");
    expect(db.disk).toBe(1);
    await state.settle();
    expect(db.saves).toHaveLength(3);
  });
});
