import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startLineProcess, type LineProcess } from "./processes.js";

/** The built CLI and the chaos harness's Azurite process, beside this build's bench. */
export const CLI = fileURLToPath(new URL("../../shared/cli/main.js", import.meta.url));
const AZURITE = fileURLToPath(new URL("../../test/chaos/azurite-process.js", import.meta.url));
const AZURITE_IN_MEMORY = fileURLToPath(new URL("./azurite-memory.js", import.meta.url));

/** Azurite's Table service as a process of its own (durable, as `npm start` embeds it, or in memory), so that the services can be killed while the store stays up. */
export interface StoreProcess {
  readonly connectionString: string;
  stop(): Promise<void>;
  /** SIGKILL at once, for an exit handler that cannot wait. */
  killNow(): void;
}

/** `dataDir` for a durable store (every write on disk before its answer), or "memory". */
export async function startStoreProcess(dataDir: string): Promise<StoreProcess> {
  const azurite: LineProcess = dataDir === "memory" ? startLineProcess(AZURITE_IN_MEMORY, []) : startLineProcess(AZURITE, [dataDir, "0"]);
  const { connectionString } = (await azurite.waitFor((line) => typeof line["connectionString"] === "string", 60_000)) as unknown as { connectionString: string };
  return { connectionString, stop: () => azurite.kill("SIGTERM"), killNow: () => void azurite.child.kill("SIGKILL") };
}

/** One `ha-module serve` instance: its port is kept, so that it comes back on the same address. */
interface Instance {
  port: number;
  child: ChildProcess | undefined;
  output: string;
}

/**
 * Several `ha-module serve` on one store (docs/deploy.md#several-instances-on-premises), each
 * stopped and started again on its own port: what an outage of the service for everyone, a
 * restart of every instance or a rolling restart does to the participants that list them all.
 */
export class ServiceInstances {
  readonly #instances: Instance[];
  /** Milliseconds from spawn to "listening" of every start so far, in order. */
  readonly startupMs: number[] = [];

  constructor(
    count: number,
    private readonly env: Record<string, string>,
    /** Told of each stop asked, each exit and each start listening (Date.now()), for a bench's event log. */
    private readonly onEvent: (event: { instance: number; event: "stopping" | "exited" | "listening"; at: number }) => void = () => undefined,
    /** Where each instance's output goes (serve-<index>.log, every start appended, each line after its Date.now()), if anywhere. */
    private readonly logDir?: string,
  ) {
    this.#instances = Array.from({ length: count }, () => ({ port: 0, child: undefined, output: "" }));
  }

  get count(): number {
    return this.#instances.length;
  }

  /** Every instance's API URL, in order: what `--endpoint a,b,c` lists. */
  get endpoints(): string[] {
    return this.#instances.map((instance) => `http://127.0.0.1:${instance.port}/api`);
  }

  /** Starts instance `index` (on its port once it has one); resolves with Date.now() when it listens. */
  async start(index: number): Promise<number> {
    const instance = this.#instances[index]!;
    if (instance.child !== undefined) throw new Error(`serve #${index} is running`);
    const spawnedAt = Date.now();
    const child = spawn(process.execPath, [CLI, "serve"], { env: { ...process.env, ...this.env, PORT: String(instance.port) }, stdio: ["ignore", "pipe", "pipe"] });
    instance.child = child;
    instance.output = "";
    this.#partial.delete(index);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve #${index} did not listen within 60 s:\n${instance.output}`)), 60_000);
      const look = (chunk: Buffer): void => {
        this.#record(index, chunk);
        instance.output = (instance.output + chunk.toString()).slice(-20_000);
        const found = /listening on http:\/\/127\.0\.0\.1:(\d+)\/api/.exec(instance.output);
        if (found === null) return;
        const listenedAt = Date.now();
        this.onEvent({ instance: index, event: "listening", at: listenedAt });
        clearTimeout(timer);
        child.stdout!.off("data", look);
        child.stdout!.on("data", (more: Buffer) => {
          this.#record(index, more);
          instance.output = (instance.output + more.toString()).slice(-20_000);
        });
        instance.port = Number(found[1]);
        this.startupMs.push(listenedAt - spawnedAt);
        resolve(listenedAt);
      };
      child.stdout!.on("data", look);
      child.stderr!.on("data", (chunk: Buffer) => {
        this.#record(index, chunk);
        instance.output = (instance.output + chunk.toString()).slice(-20_000);
      });
      child.once("exit", (code, signal) => {
        this.onEvent({ instance: index, event: "exited", at: Date.now() });
        if (instance.child === child) instance.child = undefined;
        clearTimeout(timer);
        reject(new Error(`serve #${index} exited (${signal ?? code}) before it listened:\n${instance.output}`));
      });
    });
  }

  /** Starts every instance at once; resolves with when each listened (Date.now()). */
  startAll(): Promise<number[]> {
    return Promise.all(this.#instances.map((_, index) => this.start(index)));
  }

  /** Stops instance `index` with `signal` (SIGKILL: a crash; SIGTERM: a clean stop) and waits until it is gone. */
  async stop(index: number, signal: NodeJS.Signals): Promise<void> {
    const instance = this.#instances[index]!;
    const child = instance.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
      instance.child = undefined;
      return;
    }
    const exited = once(child, "exit");
    this.onEvent({ instance: index, event: "stopping", at: Date.now() });
    child.kill(signal);
    const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(killer);
    instance.child = undefined;
  }

  /** Stops every instance at once with `signal`; resolves when all are gone. */
  async stopAll(signal: NodeJS.Signals): Promise<void> {
    await Promise.all(this.#instances.map((_, index) => this.stop(index, signal)));
  }

  /** Each instance's output not yet ended by a newline, so that every line logged gets its time. */
  readonly #partial = new Map<number, string>();

  #record(index: number, chunk: Buffer): void {
    if (this.logDir === undefined) return;
    const lines = ((this.#partial.get(index) ?? "") + chunk.toString()).split("\n");
    this.#partial.set(index, lines.pop() ?? "");
    // Date.now() as the participants' event lines have it, to set the two side by side.
    if (lines.length > 0) appendFileSync(join(this.logDir, `serve-${index}.log`), lines.map((line) => `${Date.now()} ${line}\n`).join(""));
  }

  /** SIGKILL to every instance at once, for an exit handler that cannot wait. */
  killNow(): void {
    for (const instance of this.#instances) instance.child?.kill("SIGKILL");
  }

  /** Resolves once GET /api/health of instance `index` answers 200. */
  async healthy(index: number, timeoutMs = 60_000): Promise<void> {
    const url = `${this.endpoints[index]}/health`;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`serve #${index} not healthy within ${timeoutMs} ms (last status ${status}):\n${this.#instances[index]!.output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  output(index: number): string {
    return this.#instances[index]!.output;
  }
}
