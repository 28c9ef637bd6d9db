/**
 * The service's CPU per participant cycle (docs/api.md#participant-heartbeat), A/B in one
 * run: an HPC-like participant (3 roles renewed with their tokens, a member heartbeat with
 * its token, a group poll) as five single requests, against the same five parts as one
 * POST /api/heartbeat, through `ha-module serve` on one Azurite, alternating windows of the
 * same length and concurrency so that a loaded machine's drift falls on both sides alike.
 * Prints, per side, cycles per second, requests per cycle and the service's CPU ms per
 * cycle (from /proc, Linux only), and the ratio of CPU per cycle, singles ÷ batched.
 * --profile-dir runs the service under `node --cpu-prof` and leaves its .cpuprofile there.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cpuSeconds, startLineProcess, startService } from "./helpers/processes.js";
import { positiveFlag, readArgs } from "./helpers/args.js";

const CLI = fileURLToPath(new URL("../shared/cli/main.js", import.meta.url));
const AZURITE = fileURLToPath(new URL("../test/chaos/azurite-process.js", import.meta.url));
const ROLES = ["scheduler", "broker", "session"];

const USAGE = `Usage: npm run bench -- participant-cycle-cost [--rounds 5] [--window-ms 3000]
                                               [--concurrency 4] [--profile-dir DIR]

The service's CPU per participant cycle: an HPC-like participant (3 roles renewed with
their tokens, a member heartbeat, a group poll) as five single requests, against the same
five parts as one POST /api/heartbeat, through one \`ha-module serve\` on one Azurite, in
alternating windows. Prints cycles/s, requests per cycle and CPU ms per cycle per side
(from /proc, Linux only) and the ratio singles ÷ batched.

Options:
  --rounds N          rounds of the two windows (default 5)
  --window-ms MS      each window's length (default 3000)
  --concurrency N     participants cycling at once (default 4)
  --profile-dir DIR   run the service under node --cpu-prof, its .cpuprofile left in DIR`;
const { values } = readArgs(USAGE, {
  rounds: { type: "string", default: "5" },
  "window-ms": { type: "string", default: "3000" },
  concurrency: { type: "string", default: "4" },
  "profile-dir": { type: "string" },
});
const rounds = positiveFlag("rounds", values.rounds);
const windowMs = positiveFlag("window-ms", values["window-ms"]);
const concurrency = positiveFlag("concurrency", values.concurrency);
const profile = values["profile-dir"] === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${resolve(values["profile-dir"])}`, "--cpu-prof-name=participant-cost.cpuprofile"];

type Mode = "singles" | "batched";

class PartFailed extends Error {}

/** One participant: its roles, member and group, and the tokens of its last answers. */
class Participant {
  readonly #tokens = new Map<string, string>();
  requests = 0;

  constructor(
    private readonly api: string,
    private readonly name: string,
  ) {}

  async #call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    this.requests += 1;
    const response = await fetch(`${this.api}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(5000),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    // A shed or failed request (a loaded machine): the cycle does not count, and the token is kept.
    if (!response.ok) throw new PartFailed(`${method} ${path}: ${response.status}`);
    return answer;
  }

  /** One cycle: every part once, as five requests or as one. False when any part was not 200 (shed, store slow). */
  async cycle(mode: Mode): Promise<boolean> {
    try {
      await this.#cycle(mode);
      return true;
    } catch (error) {
      if (error instanceof PartFailed) return false;
      throw error;
    }
  }

  async #cycle(mode: Mode): Promise<void> {
    const group = `${this.name}-group`;
    if (mode === "singles") {
      await Promise.all([
        ...ROLES.map(async (role) => {
          const answer = await this.#call("PUT", `/primary/${this.name}.${role}`, { uuid: this.name, lease: this.#tokens.get(role) });
          this.#tokens.set(role, answer["lease"] as string);
        }),
        (async () => {
          const answer = await this.#call("PUT", `/members/${group}/head`, { session: this.name, token: this.#tokens.get("member") });
          this.#tokens.set("member", answer["token"] as string);
        })(),
        this.#call("GET", `/members/${group}`),
      ]);
      return;
    }
    const answer = await this.#call("POST", "/heartbeat", {
      roles: ROLES.map((role) => ({ utype: `${this.name}.${role}`, uuid: this.name, lease: this.#tokens.get(role) })),
      members: [{ group, member: "head", session: this.name, token: this.#tokens.get("member") }],
      groups: [{ group }],
    });
    const parts = ["roles", "members", "groups"].flatMap((list) => answer[list] as Array<{ status: number; body: Record<string, unknown> }>);
    if (parts.some((part) => part.status !== 200)) throw new PartFailed(`a part failed: ${JSON.stringify(parts.map((part) => part.status))}`);
    const [roles, members] = [answer["roles"] as Array<{ body: Record<string, unknown> }>, answer["members"] as Array<{ body: Record<string, unknown> }>];
    ROLES.forEach((role, index) => this.#tokens.set(role, roles[index]?.body["lease"] as string));
    this.#tokens.set("member", members[0]?.body["token"] as string);
  }
}

interface Window {
  readonly cyclesPerSecond: number;
  /** Cycles with a part not answered 200 (shed under load): not counted in the rates. */
  readonly failed: number;
  readonly requestsPerCycle: number;
  readonly cpuMsPerCycle: number | undefined;
}

async function window(participants: readonly Participant[], mode: Mode, pid: number | undefined): Promise<Window> {
  const before = cpuSeconds(pid);
  const requestsBefore = participants.reduce((sum, participant) => sum + participant.requests, 0);
  const started = performance.now();
  const until = started + windowMs;
  let failed = 0;
  const cycles = (
    await Promise.all(
      participants.map(async (participant) => {
        let done = 0;
        while (performance.now() < until) {
          if (await participant.cycle(mode)) done += 1;
          else failed += 1;
        }
        return done;
      }),
    )
  ).reduce((a, b) => a + b, 0);
  const seconds = (performance.now() - started) / 1000;
  const after = cpuSeconds(pid);
  const requests = participants.reduce((sum, participant) => sum + participant.requests, 0) - requestsBefore;
  return {
    cyclesPerSecond: cycles / seconds,
    failed,
    requestsPerCycle: requests / (cycles + failed),
    // Shed cycles cost the service too: CPU is spread over every cycle sent.
    cpuMsPerCycle: before === undefined || after === undefined ? undefined : ((after - before) * 1000) / (cycles + failed),
  };
}

const median = (list: number[]): number => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const dataDir = await mkdtemp(join(tmpdir(), "ha-participant-cost-"));
const azurite = startLineProcess(AZURITE, [join(dataDir, "store"), "0"]);
let service: Awaited<ReturnType<typeof startService>> | undefined;
try {
  const store = await azurite.waitFor((line) => typeof line["connectionString"] === "string", 30_000);
  service = await startService(CLI, { HA_TABLE_CONNECTION_STRING: String(store["connectionString"]) }, profile);
  const pid = service.process.child.pid;
  const participants = Array.from({ length: concurrency }, (_, index) => new Participant(service!.url, `p${index}`));
  const figures: Record<Mode, Window[]> = { singles: [], batched: [] };
  // Warm-up: every row created, tokens in hand, JIT warm; not counted.
  for (const mode of ["singles", "batched"] as const) await window(participants, mode, pid);
  for (let round = 0; round < rounds; round += 1) {
    const order: Mode[] = round % 2 === 0 ? ["singles", "batched"] : ["batched", "singles"];
    for (const mode of order) figures[mode].push(await window(participants, mode, pid));
    const line = order.map((mode) => {
      const last = figures[mode].at(-1)!;
      return `${mode} ${last.cyclesPerSecond.toFixed(0)} cycles/s (${last.failed} shed), ${last.requestsPerCycle.toFixed(2)} requests/cycle, ${last.cpuMsPerCycle?.toFixed(2) ?? "?"} ms CPU/cycle`;
    });
    process.stderr.write(`round ${round + 1}: ${line.join("; ")}\n`);
  }
  console.log(`\n${rounds} rounds × ${windowMs} ms windows, ${concurrency} participants (3 roles + member + group poll each), one Azurite, medians:`);
  const cpu: Partial<Record<Mode, number>> = {};
  for (const mode of ["singles", "batched"] as const) {
    const windows = figures[mode];
    const cpuList = windows.flatMap((one) => (one.cpuMsPerCycle === undefined ? [] : [one.cpuMsPerCycle]));
    if (cpuList.length > 0) cpu[mode] = median(cpuList);
    console.log(
      `${mode.padEnd(8)} cycles/s ${median(windows.map((one) => one.cyclesPerSecond)).toFixed(0)}, requests/cycle ${median(windows.map((one) => one.requestsPerCycle)).toFixed(2)}, service CPU ${cpu[mode]?.toFixed(2) ?? "?"} ms/cycle`,
    );
  }
  if (cpu.singles !== undefined && cpu.batched !== undefined) console.log(`service CPU per cycle, singles ÷ batched: ${(cpu.singles / cpu.batched).toFixed(2)}`);
} finally {
  await service?.process.kill("SIGTERM");
  await azurite.kill("SIGTERM");
  await rm(dataDir, { recursive: true, force: true });
}
