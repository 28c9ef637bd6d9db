import { Agent, createServer, request as forward, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

/** What the proxy saw of one request: whose it was, its method and partition, and its fate. */
export interface WireRecord {
  /** The `/p/<id>` prefix the participant's endpoint carries, or "" without one. */
  readonly participant: string;
  readonly method: string;
  /** A Table operation's PartitionKey (the utype), when its URL names one. */
  readonly partition: string | undefined;
  readonly at: number;
  status?: number;
  durationMs?: number;
  /** How long its answer was held back (setAnswerDelay) before it was passed on. */
  heldMs?: number;
  dropped?: "request" | "answer";
}

export interface WireProxy {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** Every request from now on is lost with this probability (half before, half after the upstream). */
  setLoss(probability: number): void;
  /**
   * Every answer from now on is held back for a random time, exponential with its 99th
   * percentile at `p99Ms` (mean p99Ms / ln 100): a service slow at times, as a busy machine's
   * is; 0 passes answers on at once.
   */
  setAnswerDelay(p99Ms: number): void;
  /** The records since the last take (or since start), then forgets them. */
  take(): WireRecord[];
  close(): Promise<void>;
}

const PARTICIPANT_PREFIX = /^\/p\/([A-Za-z0-9_.-]+)(\/.*)$/;
const PARTITION = /PartitionKey='([^']*)'/;

/**
 * A counting (and, on demand, lossy) HTTP proxy: the bench's view "on the wire". In front
 * of the local host it counts every HTTP call per participant (each participant's endpoint
 * is `<proxy>/p/<id>/api`, the prefix is stripped before forwarding); in front of Azurite
 * it counts every store operation, per utype when the URL names a PartitionKey. Counts
 * come from here, never from the clients.
 *
 * A lost message is never answered: half of the losses drop the request (the upstream
 * never sees it), half drop the answer (the upstream applied it, the caller never learns),
 * so a client sees what a lossy network does to it: a call that times out.
 */
export async function startWireProxy(upstream: string): Promise<WireProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let loss = 0;
  let answerDelayMeanMs = 0;
  let records: WireRecord[] = [];
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const path = incoming.url ?? "/";
    const prefixed = PARTICIPANT_PREFIX.exec(path);
    const forwardPath = prefixed?.[2] ?? path;
    const record: WireRecord = {
      participant: prefixed?.[1] ?? "",
      method: incoming.method ?? "GET",
      partition: PARTITION.exec(decodeURIComponent(forwardPath))?.[1],
      at: performance.now(),
    };
    records.push(record);
    const lost = loss > 0 && Math.random() < loss;
    if (lost && Math.random() < 0.5) {
      // Lost on the way in: read and discard it; the caller's own timeout ends the exchange.
      record.dropped = "request";
      incoming.resume();
      return;
    }
    const upstreamRequest = forward(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: forwardPath,
        headers: incoming.headers,
        agent,
      },
      (answer) => {
        record.status = answer.statusCode;
        record.durationMs = performance.now() - record.at;
        if (lost) {
          record.dropped = "answer";
          answer.resume();
          return;
        }
        const pass = (): void => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        };
        if (answerDelayMeanMs <= 0) return pass();
        record.heldMs = -answerDelayMeanMs * Math.log(1 - Math.random());
        setTimeout(pass, Math.round(record.heldMs));
      },
    );
    upstreamRequest.on("error", () => {
      record.status = 502;
      if (!outgoing.headersSent) outgoing.writeHead(502).end();
      else outgoing.destroy();
    });
    incoming.pipe(upstreamRequest);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setLoss: (probability) => {
      loss = probability;
    },
    setAnswerDelay: (p99Ms) => {
      answerDelayMeanMs = p99Ms / Math.log(100);
    },
    take: () => {
      const taken = records;
      records = [];
      return taken;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
