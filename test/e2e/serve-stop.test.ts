import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { CLI_PATH } from "../helpers/service-process.js";

/**
 * docs/cli.md#serve: the service stops cleanly on SIGTERM, also when the signal comes the moment
 * the banner appears (a supervisor that starts it, waits for the banner, then stops it).
 * Several at once, so that a loaded machine widens any gap between the banner and the
 * signal handlers.
 */
describe("ha-module serve stops cleanly on a SIGTERM sent as soon as it is listening", () => {
  it("exits 0 after its clean stop, every time", async () => {
    const exits = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const child = spawn(process.execPath, [CLI_PATH, "serve"], {
          env: { ...process.env, PORT: "0", HA_IN_MEMORY: "true" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        let signalled = false;
        child.stdout!.on("data", (chunk: Buffer) => {
          output += chunk.toString();
          if (signalled || !output.includes("listening on")) return;
          signalled = true;
          child.kill("SIGTERM");
        });
        const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
        return { code, signal, stopped: output.includes("ha-module stopped") };
      }),
    );
    expect(exits).toEqual(exits.map(() => ({ code: 0, signal: null, stopped: true })));
  });
});
