import { describe, expect, it } from "vitest";
import { Listeners } from "../../shared/sdk/loop/listeners.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { leaseView, primaryView, ScriptedTransport } from "../helpers/sdk-fakes.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";
import { collectUncaught } from "../helpers/uncaught.js";

interface Events {
  tick: number;
}

function messages(errors: unknown[]): string[] {
  return errors.map((error) => (error instanceof Error ? error.message : String(error)));
}

describe("Listeners: a throwing handler is never dropped", () => {
  it("rethrows to 'uncaughtException' when nobody hears it, after every handler ran", async () => {
    const listeners = new Listeners<Events>(() => false);
    const seen: number[] = [];
    listeners.on("tick", () => {
      throw new Error("sync handler bug");
    });
    listeners.on("tick", async () => {
      await settle();
      throw new Error("async handler bug");
    });
    listeners.on("tick", (n) => void seen.push(n));
    const caught = await collectUncaught(() => listeners.emit("tick", 7));
    expect(seen).toEqual([7]);
    expect(messages(caught)).toEqual(["sync handler bug", "async handler bug"]);
  });

  it("does not rethrow what onHandlerError heard", async () => {
    const heard: string[] = [];
    const listeners = new Listeners<Events>((error, event) => {
      heard.push(`${String(event)}: ${(error as Error).message}`);
      return true;
    });
    listeners.on("tick", () => {
      throw new Error("handler bug");
    });
    const caught = await collectUncaught(() => listeners.emit("tick", 1));
    expect(heard).toEqual(["tick: handler bug"]);
    expect(caught).toEqual([]);
  });

  it("rethrows both when onHandlerError itself throws", async () => {
    const listeners = new Listeners<Events>(() => {
      throw new Error("reporter bug");
    });
    listeners.on("tick", () => {
      throw new Error("handler bug");
    });
    const caught = await collectUncaught(() => listeners.emit("tick", 1));
    expect(messages(caught)).toEqual(["reporter bug", "handler bug"]);
  });
});

describe("PrimaryElector handler errors without an `error` listener", () => {
  it("surface as 'uncaughtException' and the elector goes on as primary", async () => {
    const clock = new FakeClock();
    const transport = new ScriptedTransport(clock);
    const elector = new PrimaryElector({ utype: "a", transport, clock, newUuid: () => "u1", announce: false });
    elector.on("elected", ({ epoch }) => {
      // An invariant check inside a handler, as a test might write it: it must not vanish.
      if (epoch < 2) throw new Error(`epoch ${epoch} is too low`);
    });
    const caught = await collectUncaught(async () => {
      elector.start();
      await clock.advance(0);
      transport.take("getPrimary").respond(leaseView("a", null));
      await settle();
      transport.take("heartbeat").respond({ outcome: "accepted", view: leaseView("a", primaryView({ uuid: "u1" })), lease: "t" });
      await settle();
    });
    expect(messages(caught)).toEqual(["epoch 1 is too low"]);
    expect(elector.isPrimary()).toBe(true);
    await clock.advance(1000);
    expect(transport.take("heartbeat").request?.lease).toBe("t");
  });
});
