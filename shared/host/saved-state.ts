import { GroupCommit } from "./group-commit.js";

/**
 * Keeps an in-memory database's answers behind its saves: nothing anyone is told may be
 * lost by a crash. Every call to the database reports what it did (`changed()` after
 * applying a write), then awaits `settle()` before its answer goes out.
 *
 * Guarantee: `settle()` resolves only once every change applied before it was called is
 * in a save that succeeded. That covers a write's own change, and also what a read (or
 * a refused write: a 412 says the entity changed) may have seen of another write whose
 * save is still running: an answer never reveals state that a crash could still take
 * back. With nothing unsaved it resolves without saving. A failed save rejects; the
 * changes stay counted as unsaved, so every answer fails (the caller sees the store as
 * unavailable) until a save succeeds and writes them all.
 *
 * Saves go through a GroupCommit: calls that settle while a save runs share the next.
 */
export class SavedState {
  readonly #commit: GroupCommit;
  /** Changes applied in memory so far, and how many of them a successful save holds. */
  #applied = 0;
  #saved = 0;

  /** `save` must write the whole state as it is when it is called. */
  constructor(save: () => Promise<void>) {
    this.#commit = new GroupCommit(async () => {
      const upTo = this.#applied;
      await save();
      this.#saved = Math.max(this.#saved, upTo);
    });
  }

  /** Counts a change that was just applied in memory. */
  changed(): void {
    this.#applied += 1;
  }

  /** Resolves when every change applied so far is saved; rejects when its save fails. */
  async settle(): Promise<void> {
    // The save that flush() waits for starts after this point, so it holds `#applied`.
    if (this.#saved < this.#applied) await this.#commit.flush();
  }
}
