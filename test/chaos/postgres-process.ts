/**
 * `node postgres-process.js <dataDir> <port>`: the PostgreSQL server of `HA_STORE=postgres
 * npm start` (shared/host/embedded-postgres.ts: durable — fsync and synchronous commits on —
 * and the data directory locked) as a process of its own, so that a chaos run can freeze or
 * kill the store while the service stays up. Port 0 picks a free one; restart it on the same
 * directory and port to bring the same database back (PostgreSQL recovers from its WAL).
 *
 * The server's processes are this one's descendants: its keeper, the postmaster and every
 * backend (each in a session of its own, so only the process tree reaches them all).
 *
 * Prints one JSON line, {"url", "port"} (the URL with the password, as HA_POSTGRES_URL is
 * written), once the server accepts connections; stops the server and exits on SIGTERM or
 * SIGINT; exits 1 if the server exits when nothing asked it to.
 */
import { startEmbeddedPostgres } from "../../shared/host/embedded-postgres.js";

const [dataDir, portText = "0"] = process.argv.slice(2);
const port = Number(portText);
if (dataDir === undefined || dataDir === "" || !Number.isSafeInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`postgres-process: expected <dataDir> <port>, got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(2);
}

const server = await startEmbeddedPostgres({ dataDir, inMemory: false, port, durable: true });
const url = new URL(server.url);
url.password = server.password;
process.stdout.write(`${JSON.stringify({ url: url.href, port: server.port })}\n`);

// The keeper is this process's child: once it has exited (and Node reaped it), its pid is gone.
const watch = setInterval(() => {
  try {
    process.kill(server.processGroup, 0);
  } catch {
    process.stderr.write("postgres-process: the server exited when nothing had stopped it\n");
    process.exit(1);
  }
}, 200);

const stop = (): void => {
  clearInterval(watch);
  void server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
