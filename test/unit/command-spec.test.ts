import { describe, expect, it } from "vitest";
import { closest, parseCommandLine, type CommandSpec } from "../../shared/cli/command-spec.js";
import { parseDuration } from "../../shared/cli/client-flags.js";
import { UsageError } from "../../shared/cli/usage-error.js";

const spec: CommandSpec = {
  name: "run",
  synopsis: "<utype> [options] -- <command>",
  summary: "test",
  options: [{ name: "check-port", value: "P", help: "" }, { name: "watch", help: "" }],
  trailing: true,
};

describe("parseCommandLine", () => {
  it("splits the command after -- from the command's own arguments", () => {
    expect(parseCommandLine(spec, ["x", "--check-port", "5", "--", "node", "--watch", "-h"])).toEqual({
      values: { "check-port": "5" },
      positionals: ["x"],
      trailing: ["node", "--watch", "-h"],
    });
  });

  it("takes a negative number as an option's value, so that the option's own check explains it", () => {
    expect(parseCommandLine(spec, ["x", "--check-port", "-1"])).toMatchObject({ values: { "check-port": "-1" } });
  });

  it("an unknown option is named whole, with the option it is a typo of, or where an option for the command goes", () => {
    const message = (args: string[]): string => {
      try {
        parseCommandLine(spec, args);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        return (error as Error).message;
      }
      throw new Error("no usage error");
    };
    expect(message(["x", "--chek-port", "5"])).toBe("Unknown option '--chek-port'. Did you mean --check-port?");
    expect(message(["x", "--check", "5"])).toBe("Unknown option '--check'. Did you mean --check-port?");
    expect(message(["x", "--frobnicate"])).toBe("Unknown option '--frobnicate'. An option for the command goes after --: ha-module run <utype> -- <command> --frobnicate");
  });

  it("closest(): a typo within a third of the name's letters, or the one name a prefix begins", () => {
    const names = ["--address", "--endpoint", "--key", "--timeout", "--help"];
    expect(closest("--adress", names)).toBe("--address");
    expect(closest("--endpiont", names)).toBe("--endpoint");
    expect(closest("--kye", names)).toBe("--key");
    expect(closest("--time", names)).toBe("--timeout");
    expect(closest("--verbose", names)).toBeUndefined();
    expect(closest("--x", names)).toBeUndefined();
  });

  it("--help or -h before -- asks for help, whatever else is wrong", () => {
    expect(parseCommandLine(spec, ["--bogus", "-h"])).toBe("help");
    expect(parseCommandLine(spec, ["x", "--help", "--", "cmd"])).toBe("help");
  });

  it("refuses an option the command does not take", () => {
    expect(() => parseCommandLine(spec, ["--address", "a"])).toThrow(UsageError);
  });
});

describe("parseDuration", () => {
  it.each([
    ["0", 0],
    ["500ms", 500],
    ["10s", 10_000],
    ["1.5s", 1500],
    ["2m", 120_000],
    ["1h", 3_600_000],
    // Compound, as the health flags (and Docker) take them: one parser for every duration flag.
    ["1m30s", 90_000],
    ["1h2m3s4ms", 3_723_004],
    ["1.5m", 90_000],
  ])("%s is %d ms", (text, ms) => {
    expect(parseDuration("timeout", text)).toBe(ms);
  });

  it.each(["10", "-1s", "s", "1d", "ten seconds", "1m30", "1m 30s", "m30s"])("refuses %j, asking for a unit", (text) => {
    expect(() => parseDuration("timeout", text)).toThrow(/--timeout must be a duration with a unit, such as 500ms, 10s, 2m or 1m30s, or 0/);
  });

  it("refuses less than the flag's minimum by name", () => {
    expect(() => parseDuration("health-timeout", "0s", { minMs: 1 })).toThrow(/--health-timeout must be longer than 0, such as 5s \(got "0s"\)/);
    expect(parseDuration("timeout", "0s")).toBe(0);
  });
});
