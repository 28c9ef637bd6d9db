import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../../shared/host/embedded-postgres.js";
import { createPostgresStore } from "../../shared/store/create-postgres-store.js";
import type { ConfiguredStore } from "../../shared/store/configured-store.js";

/** A real PostgreSQL on 127.0.0.1 (a throwaway data directory), for one test file. */
export function startTestPostgres(options: { durable?: boolean; port?: number; dataDir?: string } = {}): Promise<EmbeddedPostgres> {
  return startEmbeddedPostgres({ dataDir: options.dataDir ?? "", inMemory: options.dataDir === undefined, port: options.port, durable: options.durable });
}

let schemaCounter = 0;

/** A fresh schema's name, so that tests never see each other's rows. */
export function freshSchema(prefix = "t"): string {
  schemaCounter += 1;
  return `${prefix}${process.pid}x${schemaCounter}`;
}

/**
 * The store built by the production factory in a fresh schema (created by prepare(), as
 * HA_STORE_CREATE does), with the embedded server's password. Close it when done.
 */
export async function createFreshPostgresStore(server: EmbeddedPostgres, schema = freshSchema(), createIfMissing = true): Promise<ConfiguredStore> {
  const configured = createPostgresStore({ kind: "postgres", schema, connection: { mode: "url", url: server.url, auth: "password" }, createIfMissing }, { password: server.password });
  await configured.prepare();
  return configured;
}

/** A client of its own, as a DBA's or an operator's script would use, to look at or damage rows behind the service. */
export async function rawClient(server: EmbeddedPostgres): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: urlWithPassword(server) });
  await client.connect();
  return client;
}

/** The server's URL with its password in it, as a user would write HA_POSTGRES_URL. */
export function urlWithPassword(server: EmbeddedPostgres): string {
  const url = new URL(server.url);
  url.password = server.password;
  return url.href;
}

/**
 * Every process of the embedded server: its keeper, the postmaster and the postmaster's
 * children (backends and workers, each of which PostgreSQL puts in a session of its own, so
 * that signalling the keeper's process group does not reach them). Linux, from /proc.
 */
export function serverProcesses(server: EmbeddedPostgres): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const found = [server.processGroup];
  for (let i = 0; i < found.length; i += 1) {
    for (const [pid, ppid] of parents) if (ppid === found[i] && !found.includes(pid)) found.push(pid);
  }
  return found;
}

/** Sends `signal` to every process of the server: parents first to stop, children first to continue. */
export function signalServer(server: EmbeddedPostgres, signal: NodeJS.Signals): number[] {
  const pids = serverProcesses(server);
  for (const pid of signal === "SIGCONT" ? [...pids].reverse() : pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A crash of the whole server (SIGKILL to every process of it), resolved once none is left; then close() releases its directory. */
export async function crashServer(server: EmbeddedPostgres): Promise<void> {
  const pids = signalServer(server, "SIGKILL");
  for (;;) {
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    if (alive.length === 0) break;
    await new Promise((done) => setTimeout(done, 20));
  }
  await server.close();
}
