import { describe, expect, it } from "vitest";
import type { LeaseService } from "../../shared/lease/lease-service.js";
import type { MemberService } from "../../shared/members/member-service.js";
import { participantHeartbeat } from "../../shared/participant/participant-service.js";

/**
 * participantHeartbeat (docs/api.md#participant-heartbeat) isolates its parts: whatever
 * one part's service call throws, synchronously or as a rejected promise, is that part's
 * failure; the other parts' results stand.
 */
describe("participantHeartbeat's parts fail alone", () => {
  const accepted = { outcome: "accepted" } as const;
  const service = {
    heartbeat: ({ utype }: { utype: string }) => {
      if (utype === "throws-at-once") throw new TypeError("thrown before any promise");
      if (utype === "rejects") return Promise.reject(new TypeError("rejected"));
      return Promise.resolve({ ...accepted, utype });
    },
    getPrimary: (utype: string) => {
      if (utype === "throws-at-once") throw new RangeError("read thrown at once");
      return Promise.resolve({ utype });
    },
  } as unknown as LeaseService;
  const members = {
    heartbeat: () => {
      throw new TypeError("member thrown at once");
    },
    list: (group: string) => Promise.resolve({ group, members: [], intervalMs: 1, timeoutMs: 5, ttlMs: 15 }),
  } as unknown as MemberService;

  it("a part whose call throws at once or rejects is { ok: false } with its error; the others are { ok: true }", async () => {
    const results = await participantHeartbeat(
      { service, members },
      {
        roles: ["fine", "throws-at-once", "rejects"].map((utype) => ({ utype, uuid: "a" })),
        reads: [{ utype: "throws-at-once" }, { utype: "fine-read" }],
        members: [{ group: "g", member: "m", session: "s" }],
        groups: [{ group: "g" }],
      },
    );
    expect(results.roles.map((result) => (result.ok ? "ok" : String(result.error)))).toEqual(["ok", "TypeError: thrown before any promise", "TypeError: rejected"]);
    expect(results.reads.map((result) => (result.ok ? "ok" : String(result.error)))).toEqual(["RangeError: read thrown at once", "ok"]);
    expect(results.members).toEqual([{ ok: false, error: new TypeError("member thrown at once") }]);
    expect(results.groups).toEqual([{ ok: true, value: expect.objectContaining({ group: "g", cursor: expect.any(String) }) }]);
  });
});
