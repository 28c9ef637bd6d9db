/**
 * `node azurite-memory.js`: Azurite's Table service in memory, as a process of its own, for a
 * benchmark whose figures must not be the store's speed (test/chaos/azurite-process.ts is
 * the durable one: every write on disk before its answer). Prints one JSON line,
 * {"connectionString", "port"}, once it listens; stops on SIGTERM or SIGINT.
 */
import { startEmbeddedAzurite } from "../../shared/host/embedded-azurite.js";

const azurite = await startEmbeddedAzurite({ dataDir: "", inMemory: true, port: 0 });
process.stdout.write(`${JSON.stringify({ connectionString: azurite.connectionString, port: Number(new URL(azurite.endpoint).port) })}\n`);
const stop = (): void => {
  void azurite.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
