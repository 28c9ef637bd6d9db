import { describe, expect, it } from "vitest";
import { loneRenewalCost } from "../../bench/compare/algorithms-phase.js";
import type { WireRecord } from "../../bench/helpers/wire-proxy.js";

const put = (participant: string, at: number, durationMs: number | undefined, status = 200): WireRecord => ({
  participant,
  method: "PUT",
  partition: undefined,
  at,
  status,
  ...(durationMs === undefined ? {} : { durationMs }),
});
const op = (partition: string, at: number): WireRecord => ({ participant: "", method: "MERGE", partition, at, status: 204, durationMs: 1 });

describe("bench compare: store operations per renewal alone on the wire", () => {
  it("counts the operations on the role's partition while each lone renewal was in flight", () => {
    const calls = [put("ours-r0-0", 0, 10), put("ours-r0-0", 1000, 10), put("ours-r1-0", 1000, 10)];
    const ops = [op("ours-r0", 5), op("ours-r0", 1005), op("ours-r1", 1004), op("ours-r1", 1006), op("ours-r0", 500)];
    // The op at 500 was no renewal's: between calls, it is nobody's.
    expect(loneRenewalCost(calls, ops)).toEqual({ renewals: 3, ops: 4 });
  });

  it("leaves out renewals that raced another call of their participant, and calls never answered", () => {
    const calls = [put("ours-r0-0", 0, 100), put("ours-r0-0", 50, 100), put("ours-r0-0", 1000, undefined), put("ours-r0-0", 2000, 10, 409)];
    const ops = [op("ours-r0", 60), op("ours-r0", 70), op("ours-r0", 120), op("ours-r0", 2005)];
    expect(loneRenewalCost(calls, ops)).toEqual({ renewals: 0, ops: 0 });
  });
});
