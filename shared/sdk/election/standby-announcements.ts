import type { LeaseTiming } from "../../contract/timing.js";

/**
 * A standby's announcements (docs/protocol.md#standbys): a heartbeat that, refused, records
 * the standby, so that `?standbys=true` lists it and `handover --to` may name it. Which polls
 * announce, and the uuid last announced, which stop() withdraws. Bookkeeping on the
 * elector's clock; the elector sends them, and makes none while it may not compete.
 */
export class StandbyAnnouncements {
  /** The `announce` option: off, no poll announces. */
  readonly #on: boolean;
  /** The uuid last announced, and when (monotonic). */
  #last: { readonly uuid: string; readonly at: number } | undefined;

  constructor(on: boolean) {
    this.#on = on;
  }

  /** The uuid last announced; undefined before the first announcement. */
  get uuid(): string | undefined {
    return this.#last?.uuid;
  }

  /** An announcement as `uuid` was sent at `at`, answered or not (it may have landed). */
  sent(uuid: string, at: number): void {
    this.#last = { uuid, at };
  }

  /**
   * Whether this poll announces: on a standby's first poll as `uuid` and about every T/2
   * after. While its writes are refused (a grant it lacks), never on two polls in a row
   * (`announcedLast`): the refused announcements would otherwise take every poll its backoff
   * leaves, and it would no longer read the role.
   */
  due(uuid: string, now: number, timing: LeaseTiming | undefined, announcedLast: boolean, writesRefused: boolean): boolean {
    if (!this.#on) return false;
    if (announcedLast && writesRefused) return false;
    const last = this.#last;
    if (last === undefined || last.uuid !== uuid) return true;
    return timing !== undefined && now - last.at >= timing.timeoutMs / 2;
  }
}
