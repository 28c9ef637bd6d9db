/**
 * Failover times with real processes: `ha-module serve` (embedded Azurite, in memory) and
 * two `ha-module elect` processes per round. The primary is either SIGKILLed (a crash: the
 * standby waits for the lease to expire) or SIGTERMed (graceful: it releases the lease).
 * Also the heartbeat round trip an in-process PrimaryElector sees, from its stats().
 * Times are from sending the signal to the standby's `elected` line arriving here.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { PrimaryElector } from "../shared/sdk/election/primary-elector.js";
import { readArgs } from "./helpers/args.js";

const CLI = fileURLToPath(new URL("../shared/cli/main.js", import.meta.url));
const USAGE = `Usage: npm run bench -- failover [rounds] [intervalMs] [timeoutMs]

Crash (SIGKILL) and graceful (SIGTERM) failover with real processes: one \`ha-module serve\`
(in-memory embedded Azurite) and two \`ha-module elect\` per round, timed from the signal
to the standby's \`elected\` line; then an in-process elector's heartbeat round trip.

Arguments:
  rounds       rounds of each kind (default 5)
  intervalMs   the service's I (default 500)
  timeoutMs    the service's T, more than 2·I (default 2500)`;
const [roundsArg = "5", intervalArg = "500", timeoutArg = "2500"] = readArgs(USAGE, {}, { allowPositionals: true }).positionals;
const rounds = Number(roundsArg);
const intervalMs = Number(intervalArg);
const timeoutMs = Number(timeoutArg);
if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error("Expected `rounds` to be a positive integer.");
if (!Number.isSafeInteger(intervalMs) || !Number.isSafeInteger(timeoutMs) || timeoutMs <= 2 * intervalMs) {
  throw new Error("Expected `intervalMs` and `timeoutMs` to be integers with timeoutMs > 2 × intervalMs.");
}

interface Line {
  readonly event: string;
  readonly arrivedAt: number;
  readonly [field: string]: unknown;
}

/** A child whose stdout is read as JSON lines; waitFor() resolves on the first match. */
function start(args: string[], env: Record<string, string> = {}): { child: ChildProcess; waitFor(match: (line: Line) => boolean, timeout?: number): Promise<Line>; text(): string } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const lines: Line[] = [];
  let text = "";
  let rest = "";
  const waiters = new Set<() => void>();
  child.stdout!.on("data", (chunk: Buffer) => {
    text += chunk.toString();
    const parts = (rest + chunk.toString()).split("\n");
    rest = parts.pop() ?? "";
    for (const part of parts) {
      try {
        lines.push({ ...(JSON.parse(part) as { event: string }), arrivedAt: performance.now() });
      } catch {
        // the service's banner is not JSON
      }
    }
    waiters.forEach((wake) => wake());
  });
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return {
    child,
    text: () => text,
    waitFor: (match, timeout = 30_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const found = lines.find(match);
          if (found === undefined) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching line within ${timeout} ms:\n${text}`));
        }, timeout);
        waiters.add(check);
        check();
      }),
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
  return `median ${Math.round(median)} ms, min ${Math.round(sorted[0] ?? NaN)} ms, max ${Math.round(sorted.at(-1) ?? NaN)} ms (n=${sorted.length})`;
}

async function failover(endpoint: string, mode: "SIGKILL" | "SIGTERM", round: number): Promise<number> {
  const utype = `bench-${mode.toLowerCase()}-${round}`;
  const primary = start(["elect", utype, "--endpoint", endpoint]);
  await primary.waitFor((line) => line.event === "elected");
  const standby = start(["elect", utype, "--endpoint", endpoint]);
  try {
    await standby.waitFor((line) => line.event === "primaryChanged" && line["primary"] !== null);
    // Land the signal at a random point of the heartbeat cycle, as a real crash would.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * intervalMs));
    const signalledAt = performance.now();
    primary.child.kill(mode);
    const elected = await standby.waitFor((line) => line.event === "elected");
    return elected.arrivedAt - signalledAt;
  } finally {
    await Promise.all([stopChild(primary.child), stopChild(standby.child)]);
  }
}

async function heartbeatRoundTrips(endpoint: string, heartbeats: number): Promise<string> {
  const elector = new PrimaryElector({ utype: "bench-heartbeat", endpoint });
  let renewals = 0;
  const done = new Promise<void>((resolve) => {
    elector.on("elected", () => {
      const poll = setInterval(() => {
        renewals = elector.stats().heartbeatRoundTrip.count;
        if (renewals >= heartbeats) {
          clearInterval(poll);
          resolve();
        }
      }, intervalMs);
    });
  });
  elector.start();
  await done;
  const stats = elector.stats();
  await elector.stop();
  return `p50 ${stats.heartbeatRoundTrip.p50Ms?.toFixed(1)} ms, p99 ${stats.heartbeatRoundTrip.p99Ms?.toFixed(1)} ms over ${stats.heartbeatRoundTrip.count} heartbeats, ${stats.failures} failures`;
}

const service = start(["serve"], { PORT: "0", HA_IN_MEMORY: "true", HA_INTERVAL_MS: String(intervalMs), HA_TIMEOUT_MS: String(timeoutMs) });
try {
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${service.text()}`)), 30_000);
    const check = setInterval(() => {
      const found = /listening on (http:\/\/\S+\/api)/.exec(service.text());
      if (found?.[1] === undefined) return;
      clearInterval(check);
      clearTimeout(timer);
      resolve(found[1]);
    }, 50);
  });
  console.log(`ha-module failover, real processes, I = ${intervalMs} ms, T = ${timeoutMs} ms, ${rounds} rounds each`);
  const crash: number[] = [];
  const graceful: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    crash.push(await failover(url, "SIGKILL", round));
    graceful.push(await failover(url, "SIGTERM", round));
  }
  console.log(`  crash (SIGKILL → standby elected):     ${summary(crash)}; bound T + one round trip after the last renewal`);
  console.log(`  graceful (SIGTERM → standby elected):  ${summary(graceful)}; about one I`);
  console.log(`  heartbeat round trip (SDK stats):      ${await heartbeatRoundTrips(url, Math.max(50, Math.round(5000 / intervalMs)))}`);
} finally {
  await stopChild(service.child);
}
