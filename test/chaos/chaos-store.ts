import { chmodSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { reachableByOthers } from "../../shared/host/embedded-postgres.js";
import { killAndWait, processTree, sendSignal, stopAndWait, type LoggedProcess, type StartOptions } from "./processes.js";
import { startPostgresProcess, startStoreProcess, type PostgresProcess, type StoreProcess } from "./service-processes.js";

/** How long the processes of a killed store may take to be gone (an orphan is reaped by init). */
const GONE_TIMEOUT_MS = 30_000;
/** How long a process sent SIGSTOP may take to show as stopped. */
const STOPPED_TIMEOUT_MS = 2_000;

/**
 * The store of a chaos run when it runs as its own process (`--store process` or
 * `--store postgres`): what `ha-module serve` needs to use it, and the store faults. Frozen
 * means every process of the store stopped; killed means every process of it SIGKILLed and
 * gone, then started again on the same data directory and port.
 */
export interface ChaosStore {
  /** For the harness's messages: "Azurite" or "PostgreSQL". */
  readonly label: string;
  /** The settings that point `ha-module serve` at it. */
  serveEnv(): Record<string, string>;
  /** SIGSTOP to every process of the store; resolves to how many. */
  freeze(): Promise<number>;
  thaw(): void;
  /** SIGKILL to every process of the store, resolved once they are gone, to how many. */
  kill(): Promise<number>;
  restart(): Promise<void>;
  /** The end of a run: a graceful stop (SIGTERM), SIGKILL after 15 s. */
  stop(): Promise<void>;
  /** Cleanup after a failure: SIGCONT and SIGKILL to whatever of it still runs. */
  forceKill(): Promise<void>;
}

type OnUnexpectedExit = NonNullable<StartOptions["onUnexpectedExit"]>;

/** Azurite as its own process (azurite-process.ts): one process, signalled directly. */
export async function startAzuriteStore(workDir: string, onUnexpectedExit: OnUnexpectedExit): Promise<ChaosStore> {
  const dataDir = join(workDir, "azurite");
  mkdirSync(dataDir, { recursive: true });
  const start = (port: number): Promise<StoreProcess> => startStoreProcess(dataDir, port, join(workDir, "azurite.out"), onUnexpectedExit);
  let store = await start(0);
  return {
    label: "Azurite",
    serveEnv: () => ({ HA_TABLE_CONNECTION_STRING: store.connectionString }),
    freeze: async () => {
      store.process.signal("SIGSTOP");
      return 1;
    },
    thaw: () => store.process.signal("SIGCONT"),
    kill: async () => {
      await killAndWait(store.process);
      return 1;
    },
    restart: async () => {
      store = await start(store.port);
    },
    stop: () => stopAndWait(store.process),
    forceKill: () => killAndWait(store.process),
  };
}

/**
 * PostgreSQL as its own process (postgres-process.ts: the embedded server of
 * `HA_STORE=postgres npm start`, durable), `serve` pointed at it with HA_STORE=postgres and
 * HA_POSTGRES_URL. Its processes are postgres-process, the keeper, the postmaster and every
 * backend, each backend in a session of its own: the faults reach them through the process
 * tree, not a process group.
 */
export async function startPostgresStore(workDir: string, onUnexpectedExit: OnUnexpectedExit): Promise<ChaosStore> {
  const dataDir = join(workDir, "postgres");
  mkdirSync(dataDir, { recursive: true });
  // Under root the server runs as nobody (shared/host/embedded-postgres.ts), who must be able
  // to enter the work directory (a temporary one is made 0700) and every directory above it.
  if (process.getuid?.() === 0) {
    chmodSync(workDir, 0o755);
    if (!(await reachableByOthers(dataDir))) {
      throw new Error(`--store postgres as root runs PostgreSQL as nobody, who cannot enter ${workDir}: give a --work-dir that others can reach (under /tmp, say).`);
    }
  }
  const start = (port: number): Promise<PostgresProcess> => startPostgresProcess(dataDir, port, join(workDir, "postgres.out"), onUnexpectedExit);
  let server = await start(0);
  let frozen: number[] = [];
  return {
    label: "PostgreSQL",
    serveEnv: () => ({ HA_STORE: "postgres", HA_POSTGRES_URL: server.url }),
    freeze: async () => {
      frozen = await stopTree(server.process);
      return frozen.length;
    },
    thaw: () => {
      // Children first, so that the postmaster wakes to backends that run.
      for (const pid of [...frozen].reverse()) sendSignal(pid, "SIGCONT");
      frozen = [];
    },
    kill: async () => {
      server.process.expectExit();
      // Stopped first, so that the postmaster cannot start a backend between the scan and the kill.
      const pids = await stopTree(server.process);
      for (const pid of pids) sendSignal(pid, "SIGKILL");
      frozen = [];
      await server.process.exited;
      await allGone(pids);
      return pids.length;
    },
    restart: async () => {
      server = await start(server.port);
    },
    stop: async () => {
      for (const pid of processTree(server.process.pid).reverse()) if (server.process.running()) sendSignal(pid, "SIGCONT");
      await stopAndWait(server.process);
    },
    forceKill: async () => {
      if (server.process.running()) {
        for (const pid of processTree(server.process.pid)) {
          sendSignal(pid, "SIGCONT");
          sendSignal(pid, "SIGKILL");
        }
      }
      await killAndWait(server.process);
    },
  };
}

/**
 * SIGSTOP to `root` and every process below it, parents first; scanned again once those are
 * stopped, until no new one appears (a process forked just before its parent stopped).
 * Returns every pid stopped, parents before children.
 */
async function stopTree(root: LoggedProcess): Promise<number[]> {
  const stopped: number[] = [];
  while (root.running()) {
    const fresh = processTree(root.pid).filter((pid) => !stopped.includes(pid));
    if (fresh.length === 0) break;
    for (const pid of fresh) {
      if (pid === root.pid) root.signal("SIGSTOP");
      else sendSignal(pid, "SIGSTOP");
      stopped.push(pid);
    }
    await untilStopped(fresh);
  }
  return stopped;
}

/** Until each of `pids` shows as stopped (or is gone): a signal is delivered when its process next runs. */
async function untilStopped(pids: readonly number[]): Promise<void> {
  const deadline = performance.now() + STOPPED_TIMEOUT_MS;
  while (pids.some((pid) => !stoppedOrGone(pid)) && performance.now() < deadline) await sleep(1);
}

function stoppedOrGone(pid: number): boolean {
  const state = processState(pid);
  return state === undefined || state === "T" || state === "t" || state === "Z" || state === "X";
}

function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/**
 * Until none of `pids` exists, zombies included: a new postmaster refuses a data directory
 * whose postmaster.pid names a process that still exists.
 */
async function allGone(pids: readonly number[]): Promise<void> {
  const deadline = performance.now() + GONE_TIMEOUT_MS;
  for (;;) {
    const left = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code !== "ESRCH";
      }
    });
    if (left.length === 0) return;
    if (performance.now() > deadline) throw new Error(`the store's processes ${left.join(", ")} still exist ${GONE_TIMEOUT_MS} ms after SIGKILL`);
    await sleep(20);
  }
}
