import { createHash } from "node:crypto";
import { realpath, unlink } from "node:fs/promises";
import { connect, createServer, type Server } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DataDirInUseError, type DataDirHolder } from "./data-dir-in-use-error.js";

export interface DataDirLock {
  /** Where the lock lives: an abstract socket name, a named pipe or a socket file. */
  readonly address: string;
  release(): Promise<void>;
}

export interface LockDataDirOptions {
  /** Which kind of lock to take; tests use it to run the socket-file lock on Linux. */
  readonly platform?: NodeJS.Platform;
  /** How long to wait for the holder to say who it is. */
  readonly askTimeoutMs?: number;
}

/** sun_path holds 104 bytes on macOS and the BSDs, 108 on Linux; keep room for the NUL. */
const MAX_SOCKET_PATH = 103;

/**
 * Makes `dataDir` this process's own until release(): a second service that tries to
 * lock the same directory gets a DataDirInUseError that names the holder's pid.
 *
 * The lock is a listening socket, not a pid file, because the kernel closes a socket
 * when its process dies, however it dies (SIGKILL, OOM, power loss). So a lock left by
 * a crashed service never blocks the next start, a live holder is never mistaken for a
 * dead one, and a reused pid cannot hold a lock: the rule is "locked while the process
 * that took it is alive", decided by the kernel rather than by a guess from a pid.
 *
 * - Linux: an abstract socket named after a hash of the directory's real path (no file).
 * - Windows: a named pipe named the same way.
 * - Other systems (macOS, BSD): a socket file `.serve.lock` inside the directory. A file
 *   outlives its process, so one that refuses connections is stale, and is replaced. Two
 *   starts that both find it stale must not both replace it (the second would remove the
 *   socket the first has just bound), so replacing takes a second lock first, the socket
 *   file `.serve.lock.takeover`, held for the few milliseconds the replacement takes.
 *   Only a start that finds *that* one stale too (its process died while replacing) and
 *   races another start within those milliseconds could still slip through.
 *
 * The directory is identified by its real path (symbolic links resolved); it must exist.
 */
export async function lockDataDir(dataDir: string, options: LockDataDirOptions = {}): Promise<DataDirLock> {
  const directory = await realpath(dataDir);
  const platform = options.platform ?? process.platform;
  const askTimeoutMs = options.askTimeoutMs ?? 2_000;
  const address = lockAddress(directory, platform);
  const holder: DataDirHolder = { pid: process.pid, since: new Date().toISOString() };
  // Whoever connects is a service that found the directory locked: tell it who holds it.
  const server = createServer((socket) => socket.end(`${JSON.stringify(holder)}\n`));
  server.unref();

  if (isSocketFile(platform)) {
    await takeSocketFile(directory, address, server, askTimeoutMs);
  } else if (!(await listen(server, address))) {
    // An abstract socket or a named pipe exists only while its process lives.
    const other = await askHolder(address, askTimeoutMs);
    throw new DataDirInUseError(directory, other === "refused" ? undefined : other);
  }
  return {
    address,
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function lockAddress(directory: string, platform: NodeJS.Platform): string {
  const key = platform === "win32" ? directory.toLowerCase() : directory;
  const name = `ha-module-serve-${createHash("sha256").update(key).digest("hex").slice(0, 32)}`;
  if (platform === "linux") return `\0${name}`;
  if (platform === "win32") return `\\\\.\\pipe\\${name}`;
  const file = join(directory, ".serve.lock");
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH) {
    throw new Error(
      `HA_DATA_DIR ${directory} is too long a path for its lock (a socket file, at most ${MAX_SOCKET_PATH} bytes): use a shorter HA_DATA_DIR.`,
    );
  }
  return file;
}

function isSocketFile(platform: NodeJS.Platform): boolean {
  return platform !== "linux" && platform !== "win32";
}

/** How often a start waits for another one that is replacing a stale socket file. */
const TAKEOVER_ATTEMPTS = 10;

/** Binds the socket file `path`, replacing a stale one under the `.takeover` lock. */
async function takeSocketFile(directory: string, path: string, server: Server, askTimeoutMs: number): Promise<void> {
  const takeoverPath = `${path}.takeover`;
  for (let attempt = 1; ; attempt += 1) {
    if (await listen(server, path)) return;
    const holder = await askHolder(path, askTimeoutMs);
    if (holder !== "refused") throw new DataDirInUseError(directory, holder);
    const takeover = createServer((socket) => socket.end());
    takeover.unref();
    if (await listen(takeover, takeoverPath)) {
      try {
        // Another start may have replaced the stale file since we looked.
        const again = await askHolder(path, askTimeoutMs);
        if (again !== "refused") throw new DataDirInUseError(directory, again);
        await removeStale(path);
        if (await listen(server, path)) return;
        // A start that found no file at all bound it first: it holds the directory.
        const winner = await askHolder(path, askTimeoutMs);
        throw new DataDirInUseError(directory, winner === "refused" ? undefined : winner);
      } finally {
        await new Promise<void>((resolve) => takeover.close(() => resolve()));
      }
    }
    // Another start is replacing the stale file; or it died doing so, and nothing answers.
    if ((await askHolder(takeoverPath, askTimeoutMs)) === "refused") await removeStale(takeoverPath);
    if (attempt === TAKEOVER_ATTEMPTS) throw new DataDirInUseError(directory, undefined);
    await sleep(10 * attempt);
  }
}

/** Resolves false when another process has the address, throws on any other failure. */
function listen(server: Server, address: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => {
      if (error.code === "EADDRINUSE") resolve(false);
      else reject(error);
    };
    server.once("error", failed);
    server.listen({ path: address, exclusive: true }, () => {
      server.off("error", failed);
      resolve(true);
    });
  });
}

/**
 * Asks the process listening at `address` who it is. "refused": nobody listens (a stale
 * socket file); undefined: something listens but did not say (a paused or foreign
 * process), which still counts as a holder.
 */
function askHolder(address: string, timeoutMs: number): Promise<DataDirHolder | "refused" | undefined> {
  return new Promise((resolve) => {
    let answer = "";
    const socket = connect({ path: address });
    const done = (result: DataDirHolder | "refused" | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("end", () => done(parseHolder(answer)));
    socket.on("error", (error: NodeJS.ErrnoException) =>
      done(error.code === "ECONNREFUSED" || error.code === "ENOENT" ? "refused" : undefined),
    );
  });
}

function parseHolder(text: string): DataDirHolder | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<DataDirHolder>;
    if (Number.isSafeInteger(parsed.pid) && typeof parsed.since === "string") return { pid: parsed.pid!, since: parsed.since };
  } catch {
    // not one of ours
  }
  return undefined;
}

async function removeStale(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    // Already gone: binding decides who gets the lock.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
