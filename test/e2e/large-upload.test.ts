import { afterAll, beforeAll, expect, it } from "vitest";
import { head, rawExchange, streamFiller } from "../helpers/raw-http.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * A client that keeps sending a 10 MB body must still read the host's 413. A host that
 * closes the socket with the body unread resets the connection, and the client sees
 * EPIPE, often before the answer. It takes a separate process to see it: in one process
 * the client reads before the reset lands.
 */

let service: ServiceProcess;
let port: number;
beforeAll(async () => {
  service = await startServiceProcess();
  port = Number(new URL(service.url).port);
});
afterAll(async () => {
  expect(await service.stop()).toBe(0);
});

it("answers every 10 MB upload, by Content-Length or chunked, with a JSON 413 the client reads, never a reset", async () => {
  const size = 10_000_000;
  const outcomes: string[] = [];
  // Several rounds: a host that resets loses the race most of the time, not every time.
  for (let round = 0; round < 8; round += 1) {
    const chunked = round % 2 === 1;
    const exchange = await rawExchange(port, [], {
      timeoutMs: 20_000,
      send: async (socket, signal) => {
        socket.write(head("PUT /api/primary/big HTTP/1.1", ["Host: 127.0.0.1", chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${size}`]));
        await streamFiller(socket, signal, size, chunked);
      },
    });
    const code = (JSON.parse(exchange.responses[0]?.body ?? "{}") as { error?: { code?: string } }).error?.code;
    outcomes.push(`${chunked ? "chunked" : "length"}: ${exchange.responses[0]?.status ?? "no answer"} ${code ?? ""} ${exchange.error ?? ""}`.trim());
  }
  expect(outcomes).toEqual(Array.from({ length: 8 }, (_, round) => `${round % 2 === 1 ? "chunked" : "length"}: 413 PayloadTooLarge`));
});
