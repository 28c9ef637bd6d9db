import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Incident } from "./judge.js";
import type { ChaosOptions } from "./options.js";
import { Participant } from "./participant.js";
import { startAzuriteStore, startPostgresStore, type ChaosStore } from "./chaos-store.js";
import { STOP_TIMEOUT_MS, killAndWait, stopAndWait } from "./processes.js";
import { startServe, type ServeProcess } from "./service-processes.js";

export const UTYPE = "chaos";
/** Where Azurite's Table service keeps its tables in its data directory (shared/host/durable-azurite.ts). */
const STORE_FILE = "__azurite_db_table__.json";

/**
 * Everything a chaos run starts: the store (when it runs as its own process), the
 * service(s), and the participants. Each can be signalled, and started again on the same
 * port and data directory after it was killed. Every exit the harness did not cause is an
 * incident for the judge.
 */
export class Cluster {
  readonly incidents: Incident[] = [];
  readonly participants: Participant[] = [];
  services: ServeProcess[] = [];
  /** With --store process or postgres: the store as its own process(es), which the store faults hit. */
  store: ChaosStore | undefined;

  private constructor(
    private readonly options: ChaosOptions,
    private readonly workDir: string,
    readonly logPath: string,
  ) {}

  static async start(options: ChaosOptions, workDir: string, logPath: string): Promise<Cluster> {
    const cluster = new Cluster(options, workDir, logPath);
    try {
      const onStoreExit = (child: { name: string; tail: () => string }, exit: { code: number | null; signal: NodeJS.Signals | null }): void =>
        cluster.#crashed(child.name, exit, child.tail());
      if (options.store === "process") cluster.store = await startAzuriteStore(workDir, onStoreExit);
      if (options.store === "postgres") cluster.store = await startPostgresStore(workDir, onStoreExit);
      const serviceCount = options.plant === "two-services" ? 2 : 1;
      for (let index = 0; index < serviceCount; index += 1) cluster.services.push(await cluster.#startServe(index, 0));
      for (let index = 0; index < options.participants; index += 1) {
        const participant = new Participant({
          name: `p${index}`,
          utype: UTYPE,
          // With --plant two-services, participants alternate between services that share nothing.
          endpoint: cluster.services[index % serviceCount]!.url,
          logPath,
          outDir: workDir,
          launch: options.plant === "escaped-worker" ? "escaped" : options.plant === "reused-epoch" ? "respawning" : index % 2 === 1 ? "shell" : "direct",
          // Priorities mixed into the cycles (docs/chaos.md): each incarnation's drawn from the seed, 0–2, with a hold-down of 3·T.
          priorityOf: (incarnation) => priorityDraw(options.seed, index, incarnation),
          preemptAfterMs: 3 * options.timeoutMs,
          onUnexpectedExit: (what, exit, tail) => cluster.#crashed(what, exit, tail),
        });
        cluster.participants.push(participant);
        participant.start();
      }
      return cluster;
    } catch (error) {
      await cluster.kill();
      throw error;
    }
  }

  /** `ha-module serve` number `index`, on `port` (0: a free one). */
  async #startServe(index: number, port: number): Promise<ServeProcess> {
    const dataDir = join(this.workDir, `serve-${index}`);
    mkdirSync(dataDir, { recursive: true });
    const serve = await startServe({
      port,
      dataDir,
      intervalMs: this.options.intervalMs,
      timeoutMs: this.options.timeoutMs,
      ...(this.store === undefined ? {} : { env: this.store.serveEnv() }),
      outFile: join(this.workDir, `serve-${index}.out`),
      onUnexpectedExit: (child, exit) => this.#crashed(child.name, exit, child.tail()),
    });
    return serve;
  }

  /** Kills service 0 and waits for it to be gone. */
  async killServe(): Promise<void> {
    await killAndWait(this.services[0]!.process);
  }

  /** Starts service 0 again on its port and data directory. */
  async restartServe(): Promise<void> {
    this.services[0] = await this.#startServe(0, this.services[0]!.port);
  }

  /** The file of the store in use: Azurite's, run as its own process, or serve 0's embedded one (PostgreSQL has none: options refuse store-rollback with it). */
  storeFile(): string {
    if (this.store !== undefined && this.store.label !== "Azurite") throw new Error(`store-rollback: the ${this.store.label} store has no file to put back`);
    return join(this.workDir, this.store === undefined ? "serve-0" : "azurite", STORE_FILE);
  }

  /** A copy of the store's file as it is now (it is only ever replaced whole, so any copy is a complete state), at `path`. */
  copyStore(path: string): boolean {
    if (!existsSync(this.storeFile())) return false;
    copyFileSync(this.storeFile(), path);
    return true;
  }

  /**
   * The store comes back without its last writes: the process that keeps it (Azurite, or
   * serve 0 with its embedded store) is killed, its file replaced by `copy`, and after
   * `downMs` it is started again on the same port and data directory.
   */
  async rollBackStore(copy: string, downMs: number): Promise<void> {
    const file = this.storeFile();
    if (this.store === undefined) await this.killServe();
    else await this.store.kill();
    copyFileSync(copy, file);
    await new Promise((resolve) => setTimeout(resolve, downMs));
    if (this.store === undefined) await this.restartServe();
    else await this.store.restart();
  }

  #crashed(what: string, exit: { code: number | null; signal: NodeJS.Signals | null }, tail: string): void {
    const lastLines = tail.trim().split("\n").slice(-15).join("\n    ");
    this.incidents.push({ kind: "crash", what: `${what} exited (${exit.signal ?? `code ${exit.code}`}) when nothing had stopped it; its last output:\n    ${lastLines}` });
  }

  /**
   * The end of a run: every `run` gets SIGTERM (a graceful stop) at once and must exit
   * within 15 s; then the services and the store stop.
   */
  async stop(): Promise<void> {
    const stopped = await Promise.all(this.participants.map((p) => p.stop(STOP_TIMEOUT_MS).then((inTime) => ({ p, inTime }))));
    for (const { p, inTime } of stopped) {
      if (!inTime) this.incidents.push({ kind: "stuck", what: `${p.name}'s run did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM` });
    }
    for (const serve of this.services) await stopAndWait(serve.process);
    await this.store?.stop();
  }

  /** Cleanup after a failure: SIGCONT and SIGKILL to everything still running. */
  async kill(): Promise<void> {
    await Promise.all(this.participants.map((p) => p.kill()));
    for (const serve of this.services) await killAndWait(serve.process);
    await this.store?.forceKill();
  }
}

/**
 * The priority of participant `index`'s `incarnation`: 0, 1 or 2, drawn from the run's seed
 * (a replay with --seed draws the same), so that a participant comes back now preferred, now
 * not: failovers to the highest standby and preemptions happen among the faults.
 */
export function priorityDraw(seed: number, index: number, incarnation: number): number {
  let x = (seed ^ Math.imul(index + 1, 0x9e3779b1) ^ Math.imul(incarnation, 0x85ebca6b)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) % 3;
}
