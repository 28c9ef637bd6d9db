import { createServer, connect, type AddressInfo, type Socket } from "node:net";

/** SSLRequest and GSSENCRequest: a startup-phase message after which the real startup message follows. */
const NEGOTIATION_CODES = new Set([80877103, 80877104]);

/** A proxy on 127.0.0.1 in front of a PostgreSQL server that counts the statements clients send. */
export interface CountedPostgres {
  /** The proxy's port: connect to it instead of the server's. */
  readonly port: number;
  /** Statements executed so far: extended-protocol Execute messages plus simple-protocol Query messages. */
  statements(): number;
  close(): Promise<void>;
}

/**
 * Counts statements on the wire, as the Table tests count HTTP requests: each client
 * connection's messages are parsed from the frontend protocol (the untyped startup
 * message, then a type byte and a length per message), and every Execute ('E') and
 * Query ('Q') is one statement.
 */
export async function countPostgresStatements(serverPort: number): Promise<CountedPostgres> {
  let count = 0;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const server = connect(serverPort, "127.0.0.1");
    sockets.add(client).add(server);
    let buffered = Buffer.alloc(0);
    let startup = true;
    client.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (startup) {
          if (buffered.length < 8) break;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) break;
          startup = NEGOTIATION_CODES.has(buffered.readInt32BE(4));
          buffered = buffered.subarray(length);
          continue;
        }
        if (buffered.length < 5) break;
        const length = buffered.readInt32BE(1);
        if (buffered.length < 1 + length) break;
        const type = String.fromCharCode(buffered[0]!);
        if (type === "E" || type === "Q") count += 1;
        buffered = buffered.subarray(1 + length);
      }
      server.write(chunk);
    });
    server.on("data", (chunk: Buffer) => client.write(chunk));
    const end = (): void => {
      client.destroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    client.on("close", end).on("error", end);
    server.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    port: (proxy.address() as AddressInfo).port,
    statements: () => count,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
