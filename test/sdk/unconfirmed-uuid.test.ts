import { describe, expect, it } from "vitest";
import { judgeUuid, type UuidEvent } from "../../shared/sdk/election/unconfirmed-uuid.js";

/**
 * The follower's uuid rule, case by case: (unconfirmed before, event) → (unconfirmed after,
 * draw a new uuid). The elector tests show it in the loop; this table is the rule itself.
 */
describe("judgeUuid: keep the uuid, or draw a new one", () => {
  const cases: ReadonlyArray<[string, boolean, UuidEvent, boolean, boolean]> = [
    // A confirmed (fresh, or never sent) uuid: only an ended term replaces it.
    ["fresh uuid, nobody holds the role", false, { kind: "shown", holder: "none" }, false, false],
    ["fresh uuid, another primary", false, { kind: "shown", holder: "other" }, false, false],
    ["fresh uuid shown as the primary (an acquire of it landed after all)", false, { kind: "shown", holder: "self" }, true, false],
    ["fresh uuid, its acquire unanswered (may have landed)", false, { kind: "unanswered" }, true, false],
    ["fresh uuid, accepted after its deadline", false, { kind: "too-late" }, true, false],
    ["fresh uuid refused as ended", false, { kind: "ended" }, false, true],
    // An unconfirmed uuid is kept only while the service shows it as the live primary.
    ["unconfirmed, shown as the primary: keep it and renew its own lease", true, { kind: "shown", holder: "self" }, true, false],
    ["unconfirmed, another primary: its term may have ended unseen", true, { kind: "shown", holder: "other" }, false, true],
    ["unconfirmed, nobody holds the role: its term may have ended unseen", true, { kind: "shown", holder: "none" }, false, true],
    ["unconfirmed, unanswered again", true, { kind: "unanswered" }, true, false],
    ["unconfirmed, too late again", true, { kind: "too-late" }, true, false],
    ["unconfirmed, refused as ended", true, { kind: "ended" }, false, true],
  ];

  it.each(cases)("%s", (_name, before, event, unconfirmed, drawNew) => {
    expect(judgeUuid(before, event)).toEqual({ unconfirmed, drawNew });
  });
});
