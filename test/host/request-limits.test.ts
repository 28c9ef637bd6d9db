import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveHostTimeouts } from "../../shared/host/host-timeouts.js";
import { startLocalHost } from "../../shared/host/local-host.js";
import { head, rawExchange, sendThenRead, streamFiller, type RawExchange } from "../helpers/raw-http.js";
import { startTestHost, type TestHost } from "../helpers/local-host.js";

/** The host's bounds on what one request may take: 4 KiB of body, and seconds of time. */

const TIMEOUTS = { headersTimeoutMs: 300, bodyTimeoutMs: 300 };

let test: TestHost;
beforeAll(async () => {
  test = await startTestHost({ timeouts: TIMEOUTS });
});
afterAll(async () => {
  await test.close();
});

function errorOf(exchange: RawExchange): { code?: unknown; message?: unknown } | undefined {
  return (JSON.parse(exchange.responses[0]?.body ?? "{}") as { error?: { code?: unknown; message?: unknown } }).error;
}

function errorCode(exchange: RawExchange): unknown {
  return errorOf(exchange)?.code;
}

const putHead = (utype: string, framing: string): string =>
  head(`PUT /api/primary/${utype} HTTP/1.1`, ["Host: 127.0.0.1", "Content-Type: application/json", framing]);

describe("the participant heartbeat's 64 KiB (docs/api.md#participant-heartbeat)", () => {
  const postHead = (framing: string): string => head("POST /api/heartbeat HTTP/1.1", ["Host: 127.0.0.1", "Content-Type: application/json", framing]);
  /** A participant heartbeat of exactly `bytes`, padded in a lease token (treated as absent). */
  const sized = (bytes: number): string => {
    const frame = '{"roles":[{"utype":"limits","uuid":"a","lease":""}]}';
    return frame.replace('""}', `"${"t".repeat(bytes - frame.length)}"}`);
  };

  it("is read whole up to 65536 bytes and refused with 413 one byte over; the PUT route keeps 4 KiB", async () => {
    for (const [bytes, status] of [
      [5_000, 200],
      [65_536, 200],
      [65_537, 413],
    ] as const) {
      const body = sized(bytes);
      expect(Buffer.byteLength(body)).toBe(bytes);
      const byLength = await rawExchange(test.port, [postHead(`Content-Length: ${bytes}`) + body], { timeoutMs: 10_000 });
      expect(byLength.responses[0]?.status, `${bytes} bytes by length`).toBe(status);
      if (status === 413) expect(errorOf(byLength)).toMatchObject({ code: "PayloadTooLarge", message: expect.stringMatching(/the limit is 65536/) });
    }
    const five = '{"uuid":"a","lease":"' + "t".repeat(5_000) + '"}';
    const put = await rawExchange(test.port, [putHead("limits", `Content-Length: ${five.length}`) + five], { timeoutMs: 10_000 });
    expect(put.responses[0]?.status).toBe(413);
    expect(errorOf(put)).toMatchObject({ message: expect.stringMatching(/the limit is 4096/) });
  });
});

describe("a body over 4 KiB", () => {
  // A client still sending 10 MB is in test/e2e/large-upload.test.ts: it needs the host in another process.
  it("keeps the connection usable once the refused body is drained", async () => {
    const body = "x".repeat(100_000);
    const valid = '{"uuid":"after-drain"}';
    const exchange = await rawExchange(
      test.port,
      [putHead("drained", `Content-Length: ${body.length}`) + body + putHead("drained", `Content-Length: ${valid.length}`) + valid],
      { timeoutMs: 10_000, responses: 2 },
    );
    expect(exchange.responses.map((response) => response.status)).toEqual([413, 200]);
  });

  it("cuts the connection of a client that keeps sending far past 16 MiB after its 413", async () => {
    // Default timeouts (11 s for the whole request): only the byte bound can cut it this early.
    const patient = await startTestHost();
    try {
      const size = 64 * 1024 * 1024;
      let written = 0;
      const exchange = await rawExchange(patient.port, [], {
        timeoutMs: 20_000,
        responses: 2, // never comes: the exchange ends when the connection does
        send: async (socket, signal) => {
          socket.write(putHead("flood", `Content-Length: ${size}`));
          await streamFiller(socket, signal, size, false);
          written = socket.bytesWritten;
        },
      });
      expect(exchange.responses[0]?.status).toBe(413);
      expect(exchange.closed).toBe(true);
      // The host stopped reading at 16 MiB; what the client got out is that plus socket buffers.
      expect(written).toBeLessThan(size);
    } finally {
      await patient.close();
    }
  });

  it("reads a body of exactly 4096 bytes and refuses 4097, counting bytes, not characters", async () => {
    const sized = (bytes: number): string => {
      const frame = '{"uuid":"edge","address":""}';
      // "é" is 2 bytes in UTF-8: fill with it so that the limit falls inside multi-byte text.
      const filler = "é".repeat(Math.floor((bytes - frame.length) / 2)) + "a".repeat((bytes - frame.length) % 2);
      return frame.replace('""', `"${filler}"`);
    };
    for (const [bytes, status] of [[4095, 400], [4096, 400], [4097, 413]] as const) {
      const body = sized(bytes);
      expect(Buffer.byteLength(body)).toBe(bytes);
      const exchange = await rawExchange(test.port, [putHead("edge", `Content-Length: ${bytes}`) + body], { timeoutMs: 10_000 });
      // Under the limit the handler reads the body and refuses the address as too long (400).
      expect(exchange.responses[0]?.status, `${bytes} bytes`).toBe(status);
    }
  });
});

describe("slow clients", () => {
  // Generous bounds: the deadline plus Node's check interval plus a loaded machine.
  const BOUND_MS = 15_000;

  it("answers headers that never finish with a JSON 408 after the headers timeout", async () => {
    // A long body timeout puts Node's whole-request timeout (their sum) far out of reach.
    const strict = await startTestHost({ timeouts: { headersTimeoutMs: 300, bodyTimeoutMs: 30_000 } });
    try {
      const exchange = await rawExchange(strict.port, ["GET /api/primary/slow HTTP/1.1\r\nHost: 127.0.0.1\r\n", { pauseMs: 30_000 }], {
        timeoutMs: BOUND_MS,
      });
      expect(exchange.timedOut).toBe(false);
      expect(exchange.responses[0]?.status).toBe(408);
      expect(errorCode(exchange)).toBe("RequestTimeout");
      expect(errorOf(exchange)?.message).toMatch(/headers did not arrive within 300 ms/);
      expect(exchange.elapsedMs).toBeGreaterThanOrEqual(250);
    } finally {
      await strict.close();
    }
  });

  it("answers a body that never finishes with a JSON 408 after the body timeout, and writes nothing", async () => {
    const exchange = await rawExchange(test.port, [putHead("slow", "Content-Length: 100") + '{"uuid":"slo', { pauseMs: 30_000 }], {
      timeoutMs: BOUND_MS,
    });
    expect(exchange.timedOut).toBe(false);
    expect(exchange.responses[0]?.status).toBe(408);
    expect(errorCode(exchange)).toBe("RequestTimeout");
    expect(exchange.responses[0]?.headers["connection"]).toBe("close");
    // The host's own body deadline, not Node's whole-request timeout behind it.
    expect(errorOf(exchange)?.message).toMatch(/body did not arrive within 300 ms/);
    const after = await rawExchange(test.port, [head("GET /api/primary/slow HTTP/1.1", ["Host: 127.0.0.1"])], { timeoutMs: 10_000 });
    expect(JSON.parse(after.responses[0]?.body ?? "")).toMatchObject({ primary: null });
  });

  it("answers a body trickled a byte at a time with a 408 at the deadline, not when the trickle ends", async () => {
    // 400 bytes 50 ms apart: a trickle of 20 s at least (longer on a busy machine, never
    // shorter), against a deadline of 300 ms; the exchange ends at the answer.
    const trickle = Array.from({ length: 400 }, (_, index) => [String.fromCharCode(97 + (index % 26)), { pauseMs: 50 }]).flat();
    const exchange = await rawExchange(test.port, [putHead("trickle", "Content-Length: 400"), ...trickle], { timeoutMs: 15_000 });
    expect(exchange.timedOut).toBe(false);
    expect(exchange.responses[0]?.status).toBe(408);
    expect(errorOf(exchange)?.message).toMatch(/body did not arrive/);
    expect(exchange.elapsedMs).toBeLessThan(400 * 50);
  });
});

describe("an answer given while the body still arrives", () => {
  // The client writes its whole request before it reads (many do). If the host closes with
  // bytes of it still coming, the client's next write meets a reset (EPIPE) and the answer
  // waiting in its kernel is lost: it gets 0 bytes. The host must close only after the
  // answer can be read: half-close, then read and drop the rest, bounded.
  const chunkedHead = (requestLine: string, extra: string[] = []): string =>
    head(requestLine, ["Host: 127.0.0.1", "Content-Type: application/json", "Transfer-Encoding: chunked", ...extra]);
  const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

  it.each([
    ["a client that asked to close", ["Connection: close"], [chunk('{"uuid":'), { pauseMs: 150 }, chunk('"a"}'), { pauseMs: 50 }, "0\r\n\r\n"]],
    ["a body whose chunk framing breaks after the answer", [], [chunk('{"uuid":'), { pauseMs: 150 }, "zz\r\nabc\r\n", { pauseMs: 150 }, chunk("more"), "0\r\n\r\n"]],
    // TIMEOUTS make Node's whole-request timeout 1.6 s: the body outlives it.
    ["a body that outlives the whole-request timeout", [], [chunk('{"uuid":'), { pauseMs: 2_500 }, chunk('"a"}'), { pauseMs: 50 }, "0\r\n\r\n"]],
  ] as const)("a chunked LINK's 405 reaches %s", async (_case, extra, body) => {
    const exchange = await sendThenRead(test.port, [chunkedHead("LINK /api/primary/early HTTP/1.1", [...extra]), ...body], 10_000);
    expect(exchange.error).toBeUndefined();
    expect(exchange.responses.map((response) => response.status)).toEqual([405]);
    expect(JSON.parse(exchange.responses[0]?.body ?? "")).toMatchObject({ error: { code: "MethodNotAllowed" } });
  });

  // The Functions host hands a function no body without Content-Length, so the local host
  // answers such a PUT with the cause instead (docs/deploy/background.md#what-the-host-decides): the
  // answer must still reach a client that sends its whole body slowly and asked to close.
  it("a chunked PUT sent slowly by a client that asked to close gets its answer naming Content-Length, not a reset", async () => {
    const steps = [chunkedHead("PUT /api/primary/fz-0 HTTP/1.1", ["Connection: close"]), chunk('{"uuid":'), { pauseMs: 100 }, chunk('"fz"}'), { pauseMs: 50 }, "0\r\n\r\n"];
    const exchange = await sendThenRead(test.port, steps, 10_000);
    expect(exchange.error).toBeUndefined();
    expect(exchange.responses.map((response) => response.status)).toEqual([400]);
    expect(JSON.parse(exchange.responses[0]?.body ?? "")).toMatchObject({ error: { code: "InvalidRequest", message: expect.stringMatching(/Content-Length/) } });
  });
});

describe("timeout options", () => {
  it("defaults to 5 s for the headers, 5 s for the body and 11 s for the whole request, checked every second", () => {
    expect(resolveHostTimeouts()).toEqual({ headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, requestTimeoutMs: 11_000, checkIntervalMs: 1_000 });
  });

  it.each([0, -1, 1.5, Number.NaN, 600_001])("refuses bodyTimeoutMs %s, naming the option", async (value) => {
    await expect(startTestHost({ timeouts: { bodyTimeoutMs: value } })).rejects.toThrow(/`bodyTimeoutMs` to be a whole number of milliseconds/);
  });

  it("refuses a bad headersTimeoutMs before it listens", async () => {
    await expect(
      startLocalHost({ operations: [], runtime: () => Promise.reject(new Error("unused")), port: 0, timeouts: { headersTimeoutMs: 0 } }),
    ).rejects.toThrow(/`headersTimeoutMs`/);
  });
});
