import { afterEach, describe, expect, it } from "vitest";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { leaseView, ScriptedTransport } from "../helpers/sdk-fakes.js";

describe("acquisitions in flight in one process", () => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  afterEach(() => void process.off("warning", onWarning));

  it("add no listener to a signal they share: twelve roles acquiring at once raise no MaxListenersExceededWarning", async () => {
    process.on("warning", onWarning);
    const clock = new FakeClock();
    const transport = new ScriptedTransport(clock);
    const electors = Array.from({ length: 12 }, (_, index) => new PrimaryElector({ utype: `role-${index}`, transport, clock, announce: false, random: () => 0 }).start());
    await clock.advance(0);
    for (let index = 0; index < electors.length; index += 1) transport.take("getPrimary").respond(leaseView(`role-${index}`, null));
    await clock.advance(0);
    // Twelve acquisitions are out now, none answered.
    const acquires = electors.map((_, index) => transport.take("heartbeat", `role-${index}`));
    expect(acquires.every((call) => !call.settled)).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((warning) => warning.name === "MaxListenersExceededWarning").map((warning) => warning.message)).toEqual([]);
  });
});
