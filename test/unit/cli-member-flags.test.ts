import { describe, expect, it, vi } from "vitest";
import { printElectorEvents } from "../../shared/cli/elector-event-lines.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { ParticipantServiceTransport } from "../helpers/participant-fakes.js";
import { createCliElector } from "../../shared/cli/cli-elector.js";
import { clientSettings } from "../../shared/cli/client-flags.js";
import { parseCommandLine, type CommandLine } from "../../shared/cli/command-spec.js";
import { electSpec } from "../../shared/cli/commands/elect.js";
import { runSpec } from "../../shared/cli/commands/run.js";
import { renderCommandHelp } from "../../shared/cli/usage.js";
import { UsageError } from "../../shared/cli/usage-error.js";

const env = { HA_ENDPOINT: "http://127.0.0.1:9/api" };

function elector(args: string[]): ReturnType<typeof createCliElector> {
  const line = parseCommandLine(electSpec, args) as CommandLine;
  return createCliElector("svc", clientSettings(line.values, env), line.values);
}

describe("elect and run --member: the participant is also a member of the group and watches it", () => {
  it("--member joins the utype's group by default, --group another; without --member, no membership", () => {
    expect(elector(["svc", "--member", "node-3"]).membership).toMatchObject({ group: "svc", session: { member: "node-3", group: "svc" } });
    expect(elector(["svc", "--member", "node-3", "--group", "hpc"]).membership).toMatchObject({ group: "hpc", session: { member: "node-3" } });
    expect(elector(["svc", "--address", "10.0.0.4:5800", "--member", "node-3"]).membership?.session.address).toBe("10.0.0.4:5800");
    expect(elector(["svc"]).membership).toBeUndefined();
  });

  it("refuses --group without --member, and a name no URL can carry, naming the flag", () => {
    expect(() => elector(["svc", "--group", "hpc"])).toThrow(new UsageError("--group needs --member: it names the group the member joins, e.g. --member node-3 --group cluster."));
    expect(() => elector(["svc", "--member", "a b"])).toThrow(UsageError);
    expect(() => elector(["svc", "--member", "a b"])).toThrow(/`--member`/);
    expect(() => elector(["svc", "--member", "n", "--group", ".."])).toThrow(/`--group`/);
  });

  it("both commands list the flags in their help", () => {
    for (const spec of [electSpec, runSpec]) {
      const help = renderCommandHelp(spec);
      expect(help).toMatch(/--member NAME/);
      expect(help).toMatch(/--group G/);
      expect(help).toMatch(/one request per I/);
    }
  });

  it("prints the member's and the watcher's lines besides the elector's", async () => {
    const clock = new FakeClock(0);
    const elector = new PrimaryElector({ utype: "svc", transport: new ParticipantServiceTransport(clock), clock, address: "h:1", membership: { member: "node-3" } });
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    try {
      printElectorEvents(elector);
      elector.start();
      await clock.advance(3000);
      await elector.stop();
    } finally {
      write.mockRestore();
    }
    const events = lines.map((line) => JSON.parse(line) as { event: string; member?: string });
    expect(events.map((event) => event.event)).toEqual(expect.arrayContaining(["elected", "joined", "memberJoined", "memberActive"]));
    expect(events.find((event) => event.event === "joined")).toMatchObject({ group: "svc", member: "node-3", address: "h:1" });
  });
});
