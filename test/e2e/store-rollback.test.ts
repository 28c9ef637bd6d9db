import { once } from "node:events";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe, startStoreProcess, type ServeProcess, type StoreProcess } from "../chaos/service-processes.js";
import { CliProcess, realDelay, type CliEvent } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * A store that comes back without its last writes, under running `ha-module run`
 * participants (docs/design/epochs.md). Two stores, each Azurite's Table service on disk:
 * `npm start`'s embedded one (in HA_DATA_DIR: the service is stopped and started again with
 * it), and Azurite as its own process under a `ha-module serve` that stays up (the store
 * alone fails over). The store is copied while the role is held, two takeovers follow (each
 * holder SIGKILLed, a standby taking over, its command working under its epoch), then the
 * store is stopped, its file put back as the copy had it, and started again on the same
 * port: a restore from a backup, or a failover to a replica that had not received the last
 * writes.
 *
 * Before epochs were floored by the clock, each such round handed an epoch out again (the
 * restored entry counted on from the copy's). Now: the holder of the erased term is refused
 * at its first renewal after the return and stops its command; the next term's epoch is
 * above every epoch handed out before; no epoch is ever elected twice; the history shows
 * none twice.
 */
const I = 200;
const T = 2000;
/** Each participant rides through the restart (fenced work): so the erased holder meets the restored store with its term, as it would a failover's. */
const RIDE_THROUGH = "30s";
const STORE_FILE = "__azurite_db_table__.json";
const UTYPE = "rollback";

const WORKER = "console.error(`worker up epoch=${process.env.HA_EPOCH}`); setInterval(() => {}, 1000);";

/** Where the store runs, how its file is reached, and how it is rolled back to a copy. */
interface StoreUnderTest {
  readonly url: string;
  readonly storeFile: string;
  /** Stops what keeps the store, puts `copy` in place of its file, starts it again on the same port. */
  rollBack(copy: string): Promise<void>;
  stop(): Promise<void>;
}

/** `ha-module serve` with its embedded store in `dir`: the service itself stops and comes back. */
async function embedded(dir: string): Promise<StoreUnderTest> {
  const start = (port: number): Promise<ServiceProcess> =>
    startServiceProcess({ PORT: String(port), HA_IN_MEMORY: "false", HA_DATA_DIR: dir, HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  let service = await start(0);
  const port = Number(new URL(service.url).port);
  return {
    url: service.url,
    storeFile: join(dir, STORE_FILE),
    rollBack: async (copy) => {
      const stopped = once(service.child, "exit");
      service.child.kill("SIGKILL");
      await stopped;
      copyFileSync(copy, join(dir, STORE_FILE));
      await realDelay(I);
      service = await start(port);
    },
    stop: async () => void (await service.stop()),
  };
}

/** Azurite as its own process in `dir`/azurite under a `ha-module serve` that stays up: the store alone comes back. */
async function separate(dir: string): Promise<StoreUnderTest> {
  const azuriteDir = join(dir, "azurite");
  let store: StoreProcess = await startStoreProcess(azuriteDir, 0, join(dir, "azurite.out"));
  const serve: ServeProcess = await startServe({ port: 0, dataDir: join(dir, "serve"), intervalMs: I, timeoutMs: T, connectionString: store.connectionString, outFile: join(dir, "serve.out") });
  const halt = async (child: ServeProcess["process"], signal: NodeJS.Signals): Promise<void> => {
    child.expectExit();
    child.signal(signal);
    await child.exited;
  };
  return {
    url: serve.url,
    storeFile: join(azuriteDir, STORE_FILE),
    rollBack: async (copy) => {
      await halt(store.process, "SIGKILL");
      copyFileSync(copy, join(azuriteDir, STORE_FILE));
      await realDelay(I);
      store = await startStoreProcess(azuriteDir, store.port, join(dir, "azurite.out"));
    },
    stop: async () => {
      await halt(serve.process, "SIGTERM");
      await halt(store.process, "SIGTERM");
    },
  };
}

describe.each([
  { name: "npm start's embedded store (the service restarts with it)", start: embedded },
  { name: "Azurite as its own process under a serve that stays up", start: separate },
])("$name, restored from a copy under running participants", ({ start }) => {
  let dir: string;
  let copyDir: string;
  let store: StoreUnderTest | undefined;
  const runners: CliProcess[] = [];

  const participant = (name: string): CliProcess => {
    const runner = new CliProcess(name, ["run", UTYPE, "--endpoint", store!.url, "--address", name, "--ride-through", RIDE_THROUGH, "--", process.execPath, "-e", WORKER]);
    runners.push(runner);
    return runner;
  };
  const elections = (): Array<CliEvent & { who: string }> =>
    runners.flatMap((runner) => runner.events.filter((event) => event.event === "elected").map((event) => ({ ...event, who: runner.name })));
  /** The participant that is elected next after the given counts of events, and its election. */
  const nextElected = async (marks: Map<CliProcess, number>, among: readonly CliProcess[]): Promise<{ runner: CliProcess; elected: CliEvent }> =>
    Promise.any(among.map(async (runner) => ({ runner, elected: await runner.waitFor((event) => event.event === "elected", { from: marks.get(runner) ?? 0, timeoutMs: 30_000 }) })));
  const marksNow = (): Map<CliProcess, number> => new Map(runners.map((runner) => [runner, runner.events.length]));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ha-rollback-"));
    copyDir = mkdtempSync(join(tmpdir(), "ha-rollback-copy-"));
    store = await start(dir);
  });

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.kill()));
    await store?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(copyDir, { recursive: true, force: true });
  });

  it("losing two takeovers: the erased holder stops at its first renewal, the next epoch is above every one used, none is elected twice", { timeout: 120_000 }, async () => {
    const first = participant("p0");
    const firstElected = await first.waitFor((event) => event.event === "elected");
    await first.waitFor((event) => event.event === "started");
    const standbys = [participant("p1"), participant("p2"), participant("p3")];
    for (const standby of standbys) await standby.waitFor((event) => event.event === "primaryChanged" && (event["primary"] as { address?: string } | null)?.address === "p0");

    // The copy: the whole file, taken while the service runs (it is only ever replaced whole).
    copyFileSync(store!.storeFile, join(copyDir, STORE_FILE));
    const copiedEpoch = firstElected["epoch"] as number;

    // Two takeovers after the copy, each holder killed and a standby working under its epoch.
    let holder = first;
    const killed: CliProcess[] = [];
    for (let takeover = 0; takeover < 2; takeover++) {
      const marks = marksNow();
      await holder.kill();
      killed.push(holder);
      const next = await nextElected(marks, standbys.filter((runner) => !killed.includes(runner)));
      await next.runner.waitForStderr(new RegExp(`worker up epoch=${next.elected["epoch"] as number}`));
      holder = next.runner;
    }
    const erased = holder;
    const usedBefore = elections().map((event) => event.epoch as number);
    const erasedEpoch = Math.max(...usedBefore);
    expect(usedBefore.length).toBe(3);
    expect(erasedEpoch).toBeGreaterThan(copiedEpoch);

    // The loss: the store stops, and comes back as the copy had it.
    const marks = marksNow();
    await store!.rollBack(join(copyDir, STORE_FILE));
    const returnedAt = performance.now();

    // The erased term's holder is refused at its first answered renewal and stops its command.
    const demoted = await erased.waitFor((event) => event.event === "demoted", { from: marks.get(erased)!, timeoutMs: 30_000 });
    expect(demoted["epoch"]).toBe(erasedEpoch);
    await erased.waitFor((event) => event.event === "exited", { from: marks.get(erased)!, timeoutMs: 30_000 });
    console.log(`store rollback: the erased holder ${erased.name} (epoch ${erasedEpoch}) demoted ${Math.round(demoted.receivedAt - returnedAt)} ms after the return (${String(demoted["reason"])}); I = ${I} ms`);

    // The next term: above every epoch handed out before the loss, and its command works under it.
    const next = await nextElected(marks, runners.filter((runner) => !killed.includes(runner)));
    const nextEpoch = next.elected["epoch"] as number;
    console.log(`store rollback: ${next.runner.name} elected ${Math.round(next.elected.receivedAt - returnedAt)} ms after the return under epoch ${nextEpoch} (erased ${erasedEpoch}, copy ${copiedEpoch})`);
    expect(nextEpoch).toBeGreaterThan(erasedEpoch);
    await next.runner.waitForStderr(new RegExp(`worker up epoch=${nextEpoch}`));

    // Several leases later: no epoch elected twice, every election above the ones before it.
    await realDelay(T);
    const all = elections().sort((a, b) => a.receivedAt - b.receivedAt).map((event) => event.epoch as number);
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual([...all].sort((a, b) => a - b));
    const history = (await (await fetch(`${store!.url}/primary/${UTYPE}/history`)).json()) as { terms: Array<{ epoch: number }> };
    const shown = history.terms.map((term) => term.epoch);
    expect(new Set(shown).size).toBe(shown.length);
    expect(shown[0]).toBe(Math.max(...all));
  });
});
