import { describe, expect, it } from "vitest";
import { WatchdogCore } from "../../shared/cli/supervise/watchdog-core.js";
import { FakeClock } from "../helpers/fake-clock.js";

function setup(killIn = 4000) {
  const clock = new FakeClock();
  const t0 = clock.now();
  const kills: { at: number; reason: string }[] = [];
  const core = new WatchdogCore(clock, t0 + killIn, (reason) => kills.push({ at: clock.now() - t0, reason }));
  return { clock, t0, core, kills };
}

describe("WatchdogCore: kills the command's group exactly once, when run is gone or its kill time comes", () => {
  it("the lifeline's end (run died, whatever the signal) kills at once", async () => {
    const { core, kills } = setup();
    core.lifelineCut();
    core.lifelineCut();
    expect(kills).toEqual([{ at: 0, reason: expect.stringMatching(/supervisor is gone/) }]);
  });

  it("without news from run (frozen), it kills at the last kill time it was given", async () => {
    const { clock, kills } = setup(4000);
    await clock.advance(3999);
    expect(kills).toEqual([]);
    await clock.advance(1);
    expect(kills).toEqual([{ at: 4000, reason: expect.stringMatching(/deadline passed/) }]);
  });

  it("each line moves the kill time, later after a renewal or sooner when run begins a stop; split lines are joined", async () => {
    const { clock, t0, core, kills } = setup(4000);
    await clock.advance(1000);
    const lines = `${t0 + 5000}\n${t0 + 6000}\n`;
    core.input(lines.slice(0, 12));
    core.input(lines.slice(12));
    expect(core.killAt).toBe(t0 + 6000);
    await clock.advance(4999);
    expect(kills).toEqual([]);
    core.input(`${t0 + 6500.25}\n`);
    await clock.advance(300);
    core.input(`${t0 + 6300}\n`);
    await clock.advance(1);
    expect(kills).toEqual([{ at: 6300, reason: expect.any(String) }]);
  });

  it("a kill time already past kills at once", async () => {
    const { clock, t0, core, kills } = setup();
    await clock.advance(100);
    core.input(`${t0 + 50}\n`);
    expect(kills.map((k) => k.at)).toEqual([100]);
  });

  it("a line it cannot read is a cut lifeline", async () => {
    const { core, kills } = setup();
    core.input("soon\n");
    expect(kills).toEqual([{ at: 0, reason: expect.stringMatching(/instead of a kill time/) }]);
    core.input("123\n");
    expect(kills).toHaveLength(1);
  });
});
