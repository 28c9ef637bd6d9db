import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/** The bench's client-go algorithm, built (`npm test` builds before vitest runs). */
const CLIENT_GO = fileURLToPath(new URL("../../dist/bench/compare/algorithms/client-go.js", import.meta.url));

/**
 * The client-go algorithm of `npm run bench -- compare` (and of `outage`) gives up
 * leadership when a round gets no renewal within RenewDeadline, as leaderelection.go does,
 * however often the garbage collector runs: here after every 10 ms, in a process of its own
 * (`--expose-gc`), while the service it renews with is gone. A round's end taken from an
 * AbortSignal.timeout() held only by AbortSignal.any() is collected on Node 20 and never
 * fires: the leader then kept its leadership through any outage.
 */
describe("the bench's client-go algorithm", () => {
  let service: ServiceProcess | undefined;
  let child: ChildProcess | undefined;
  // Also when the test times out (a deadline that never fires): nothing is left running.
  afterAll(async () => {
    child?.kill("SIGKILL");
    await service?.stop();
  });

  it("gives up leadership at RenewDeadline when the service stops answering, with the GC running", { timeout: 60_000 }, async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: "250", HA_TIMEOUT_MS: "1250" });
    const script = [
      `import { runClientGo } from ${JSON.stringify(CLIENT_GO)};`,
      `runClientGo({ endpoint: process.env.ENDPOINT, utype: "client-go-deadline", intervalMs: 250, timeoutMs: 1250, emit: (event) => process.stdout.write(JSON.stringify(event) + "\\n") });`,
      "setInterval(() => globalThis.gc(), 10);",
    ].join("\n");
    child = spawn(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { env: { ...process.env, ENDPOINT: service.url }, stdio: ["ignore", "pipe", "inherit"] });
    try {
      const seen: string[] = [];
      const waiters = new Set<() => void>();
      createInterface({ input: child.stdout! }).on("line", (line) => {
        seen.push((JSON.parse(line) as { event: string }).event);
        for (const wake of waiters) wake();
      });
      const next = (event: string): Promise<void> =>
        new Promise((resolve) => {
          const check = (): void => {
            if (!seen.includes(event)) return;
            waiters.delete(check);
            resolve();
          };
          waiters.add(check);
          check();
        });
      await next("elected");
      const killed = service;
      service = undefined;
      const gone = once(killed.child, "exit");
      killed.child.kill("SIGKILL");
      await gone;
      // RenewDeadline is ⅔·T, 833 ms here; without a deadline that fires, never.
      await next("demoted");
      expect(seen).toContain("demoted");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
