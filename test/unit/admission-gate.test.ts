import { describe, expect, it } from "vitest";
import { AdmissionGate, LOAD_SHED_MIN_AT_HAND, type AdmissionLimits, type ShedReason } from "../../shared/service/admission.js";
import { OverloadedError } from "../../shared/service/overloaded-error.js";

/**
 * The gate's rules for a saturated process, on injected loads: with at least
 * LOAD_SHED_MIN_AT_HAND requests at hand an `other` request is refused when busy >= the
 * busy limit or delay > the delay budget; a holder never is.
 */
describe("AdmissionGate: shedding on busy time and on delay (injected load)", () => {
  const RULES: AdmissionLimits = { maxInFlight: 64, maxQueued: 256, shedBusyFraction: 0.9, shedDelayMs: 50 };

  /** A gate reading `busy` and `delay`, with `atHand` `other` requests holding slots; its refusals by reason. */
  async function gateWith(busy: number | undefined, delay: number | undefined, atHand: number, limits = RULES): Promise<{ gate: AdmissionGate; shed: ShedReason[] }> {
    const shed: ShedReason[] = [];
    const gate = new AdmissionGate(limits, 1, { busyFraction: () => busy, delayMs: () => delay }, (reason) => shed.push(reason));
    for (let i = 0; i < atHand; i += 1) await gate.enter("other");
    return { gate, shed };
  }

  it.each([
    ["busy at its limit", 0.9, 3, "busy", /busy running its own work 90 % of the last half second; the limit is 90 %/],
    ["delay past its budget", 0.2, 51, "delay", /waited 51 ms on average over the last half second to be served; the budget is 50 ms/],
    ["both: named busy", 1, 400, "busy", /busy running its own work 100 %/],
  ] as const)("%s: an `other` request is refused, counted by its reason and named with its figure; a holder is admitted", async (_name, busy, delay, reason, message) => {
    const { gate, shed } = await gateWith(busy, delay, LOAD_SHED_MIN_AT_HAND);
    const refused = gate.enter("other");
    await expect(refused).rejects.toThrow(OverloadedError);
    await expect(refused).rejects.toThrow(message);
    expect(shed).toEqual([reason]);
    await expect(gate.enter("holder")).resolves.toBeTypeOf("function");
    expect(gate.inFlight).toBe(LOAD_SHED_MIN_AT_HAND + 1);
  });

  it.each([
    ["below both", 0.89, 50, LOAD_SHED_MIN_AT_HAND, RULES],
    ["not known yet", undefined, undefined, LOAD_SHED_MIN_AT_HAND, RULES],
    ["saturated with fewer than LOAD_SHED_MIN_AT_HAND at hand", 1, 5_000, LOAD_SHED_MIN_AT_HAND - 1, RULES],
    ["busy with the busy rule off", 1, 3, LOAD_SHED_MIN_AT_HAND, { ...RULES, shedBusyFraction: undefined }],
    ["delayed with the delay rule off", 0.3, 5_000, LOAD_SHED_MIN_AT_HAND, { ...RULES, shedDelayMs: undefined }],
  ] as const)("%s: an `other` request is admitted", async (_name, busy, delay, atHand, limits) => {
    const { gate, shed } = await gateWith(busy, delay, atHand, limits);
    await expect(gate.enter("other")).resolves.toBeTypeOf("function");
    expect(shed).toEqual([]);
  });
});
