import { describe, expect, it } from "vitest";
import { parsePriorityFlags } from "../../shared/cli/cli-elector.js";
import { UsageError } from "../../shared/cli/usage-error.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";

/** `elect|run --priority N --preempt-after D|off`, HA_PRIORITY and HA_PREEMPT_AFTER (docs/cli.md): a flag wins over its variable; a mistake names its source. */
describe("--priority and --preempt-after", () => {
  it("priority 0 and the SDK's hold-down by default; read from the flag, else from the environment", () => {
    expect(parsePriorityFlags({}, {})).toEqual({ priority: 0, preemptAfterMs: undefined });
    expect(parsePriorityFlags({}, { HA_PRIORITY: "", HA_PREEMPT_AFTER: " " })).toEqual({ priority: 0, preemptAfterMs: undefined });
    expect(parsePriorityFlags({ priority: "1", "preempt-after": "45s" }, {})).toEqual({ priority: 1, preemptAfterMs: 45_000 });
    expect(parsePriorityFlags({}, { HA_PRIORITY: "-3", HA_PREEMPT_AFTER: "off" })).toEqual({ priority: -3, preemptAfterMs: "off" });
    expect(parsePriorityFlags({ priority: "+2", "preempt-after": "0" }, { HA_PRIORITY: "9", HA_PREEMPT_AFTER: "off" })).toEqual({ priority: 2, preemptAfterMs: 0 });
  });

  it.each([
    [{ priority: "1.5" }, {}, '--priority must be an integer from -1000000 to 1000000 (higher preferred; 0 when omitted), such as 1 for the preferred machine (got "1.5").'],
    [{ priority: "high" }, {}, /--priority must be an integer/],
    [{ priority: "1000001" }, {}, /--priority must be an integer from -1000000 to 1000000/],
    [{}, { HA_PRIORITY: "one" }, /HA_PRIORITY must be an integer/],
    [{ "preempt-after": "30" }, {}, '--preempt-after must be a duration with a unit, such as 30s or 2m, or off to never preempt (got "30").'],
    [{ "preempt-after": "never" }, {}, /--preempt-after must be a duration with a unit/],
    [{}, { HA_PREEMPT_AFTER: "600h" }, /HA_PREEMPT_AFTER must be a duration with a unit/],
  ] as const)("refuses %j (env %j)", (values, env, message) => {
    expect(() => parsePriorityFlags(values, env)).toThrow(UsageError);
    expect(() => parsePriorityFlags(values, env)).toThrow(message);
  });
});

describe("PrimaryElector: priority and preemptAfterMs are checked where they enter", () => {
  const base = { utype: "scheduler", endpoint: "http://127.0.0.1:1/api" };
  it.each([
    [{ priority: 0.5 }, /Expected `priority` to be an integer from -1000000 to 1000000/],
    [{ priority: "1" }, /Expected `priority` to be an integer from -1000000 to 1000000 .*got string/],
    [{ priority: 2_000_000 }, /got 2000000/],
    [{ preemptAfterMs: -1 }, /Expected `preemptAfterMs` to be a whole number of milliseconds .* or "off" to never preempt, got -1/],
    [{ preemptAfterMs: "never" }, /Expected `preemptAfterMs` .* got "never"/],
  ])("refuses %j", (options, message) => {
    expect(() => new PrimaryElector({ ...base, ...(options as object) })).toThrow(TypeError);
    expect(() => new PrimaryElector({ ...base, ...(options as object) })).toThrow(message);
  });

  it("takes a priority in range and a hold-down, or off", () => {
    expect(() => new PrimaryElector({ ...base, priority: -1_000_000, preemptAfterMs: "off" })).not.toThrow();
    expect(() => new PrimaryElector({ ...base, priority: 1_000_000, preemptAfterMs: null })).not.toThrow();
    expect(() => new PrimaryElector({ ...base, priority: 1, preemptAfterMs: 0 })).not.toThrow();
  });
});
