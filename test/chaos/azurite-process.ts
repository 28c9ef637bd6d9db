/**
 * `node azurite-process.js <dataDir> <port>`: the store of `ha-module serve` — Azurite's
 * Table service with every write on disk before its answer and the data directory locked
 * (shared/host/embedded-azurite.ts) — as a process of its own, so that a chaos run or a
 * test can freeze or kill the store while the service stays up. Port 0 picks a free one;
 * restart it on the same directory and port to bring the same store back.
 *
 * Prints one JSON line, {"connectionString", "port"}, once it listens; stops on SIGTERM or
 * SIGINT.
 */
import { startEmbeddedAzurite } from "../../shared/host/embedded-azurite.js";

const [dataDir, portText = "0"] = process.argv.slice(2);
const port = Number(portText);
if (dataDir === undefined || dataDir === "" || !Number.isSafeInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`azurite-process: expected <dataDir> <port>, got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(2);
}

const azurite = await startEmbeddedAzurite({ dataDir, inMemory: false, port });
const listening = Number(new URL(azurite.endpoint).port);
process.stdout.write(`${JSON.stringify({ connectionString: azurite.connectionString, port: listening })}\n`);

const stop = (): void => {
  void azurite.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
