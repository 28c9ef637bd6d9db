import type { Socket } from "node:net";
import { streamFiller, type RawStep } from "./raw-http.js";
import type { Prng } from "./sim/prng.js";

/**
 * Hostile HTTP requests for the local host, drawn from one seeded PRNG so that a failing
 * run replays exactly. Each case is raw bytes: much of it is what fetch refuses to send.
 */

export interface FuzzCase {
  /** The family, for the run's summary. */
  readonly kind: string;
  /** A short description for failure messages (bytes shown as JSON, cut). */
  readonly label: string;
  readonly steps: readonly RawStep[];
  readonly send?: (socket: Socket, signal: AbortSignal) => Promise<void>;
  /** Final responses the exchange must produce (pipelined requests produce several). */
  readonly responses: number;
  /** The bound on the whole exchange: past it, the case is a hang. */
  readonly timeoutMs: number;
  /** A HEAD answer has no body. */
  readonly head: boolean;
  /** The client gives up mid-request on purpose: no answer is owed. */
  readonly abandons: boolean;
  /** The method as sent, when the case is one request: a 2xx to PUT or DELETE may write. */
  readonly method: string | undefined;
}

export interface FuzzTargets {
  /** Held by a real elector all along: nothing here may take it over. */
  readonly holderUtype: string;
  /** Held at the start by a uuid that stops renewing: may expire and be taken over. */
  readonly victimUtypes: readonly string[];
  /** A real lease token (of another utype), to truncate, flip and misuse. */
  readonly realToken: string;
  readonly realTokenUtype: string;
  /** The service's API key, sent with most requests so that they get past the 401. */
  readonly apiKey: string;
}

const NORMAL_BOUND_MS = 15_000;
/** The host's default 5 s headers or body deadline, its 1 s check, and a loaded machine. */
export const SLOW_BOUND_MS = 20_000;

const CRLF = "\r\n";

export class FuzzCaseGenerator {
  constructor(
    private readonly rng: Prng,
    private readonly targets: FuzzTargets,
  ) {}

  /** One case of the main mix. */
  next(): FuzzCase {
    const roll = this.rng.next();
    if (roll < 0.14) return this.#methodCase();
    if (roll < 0.34) return this.#targetCase();
    if (roll < 0.5) return this.#headerCase();
    if (roll < 0.76) return this.#bodyCase();
    if (roll < 0.84) return this.#participantCase();
    if (roll < 0.92) return this.#tokenCase();
    return this.#rawCase();
  }

  /** Clients that hold a connection: each is answered 408 after a host deadline. */
  slowCases(): FuzzCase[] {
    const put = (utype: string, framing: string): string =>
      `PUT /api/primary/${utype} HTTP/1.1${CRLF}Host: 127.0.0.1${CRLF}x-functions-key: ${this.targets.apiKey}${CRLF}${framing}${CRLF}${CRLF}`;
    const victim = this.#pick(this.targets.victimUtypes);
    const trickle: RawStep[] = [];
    for (let index = 0; index < 400; index += 1) trickle.push("a", { pauseMs: 100 });
    return [
      this.#case("slow", "headers that stop", ["GET /api/primary/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1", { pauseMs: 60_000 }], { timeoutMs: SLOW_BOUND_MS }),
      this.#case("slow", "a request line that stops", ["PUT /api/prim", { pauseMs: 60_000 }], { timeoutMs: SLOW_BOUND_MS }),
      this.#case("slow", "a body that stops", [put(victim, "Content-Length: 200") + '{"uuid":"slow-', { pauseMs: 60_000 }], { timeoutMs: SLOW_BOUND_MS }),
      this.#case("slow", "a holder's body that stops", [put(this.targets.holderUtype, "Content-Length: 40") + '{"uuid":"x', { pauseMs: 60_000 }], { timeoutMs: SLOW_BOUND_MS }),
      this.#case("slow", "a chunked body that stops", [put(victim, "Transfer-Encoding: chunked") + "5\r\n{\"uui\r\n", { pauseMs: 60_000 }], { timeoutMs: SLOW_BOUND_MS }),
      this.#case("slow", "a body trickled a byte per 100 ms", [put(victim, "Content-Length: 400"), ...trickle], { timeoutMs: SLOW_BOUND_MS }),
      this.#case("slow", "headers trickled a byte per 100 ms", ["GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Trickle: ", ...trickle], { timeoutMs: SLOW_BOUND_MS }),
    ];
  }

  /** 10 MB uploads, which must be answered 413 and read by a client still sending. */
  bigCases(): FuzzCase[] {
    const size = 10_000_000;
    return [false, true].map((chunked) => {
      const framing = chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${size}`;
      const utype = this.#pick(this.targets.victimUtypes);
      return {
        ...this.#case("big", `10 MB ${chunked ? "chunked" : "by length"}`, [], { method: "PUT" }),
        send: async (socket: Socket, signal: AbortSignal) => {
          socket.write(`PUT /api/primary/${utype} HTTP/1.1${CRLF}Host: 127.0.0.1${CRLF}x-functions-key: ${this.targets.apiKey}${CRLF}${framing}${CRLF}${CRLF}`);
          await streamFiller(socket, signal, size, chunked);
        },
      };
    });
  }

  #methodCase(): FuzzCase {
    const method = this.#pick([
      "GET", "PUT", "DELETE", "POST", "PATCH", "HEAD", "OPTIONS", "TRACE", "TRACK", "CONNECT", "PROPFIND",
      "PURGE", "QUERY", "LINK", "MKCOL", "SEARCH", "get", "Put", "dElEtE", "G ET", "GET\t", "\u00c9T",
      this.#token(1, 12), "X".repeat(this.rng.int(20, 300)), "",
    ]);
    const target = this.#pick([`/api/primary/${this.#utype()}`, "/api/primary", "/api/health", "/api/nothing", "/", "*", "example.com:443"]);
    const body = method.toUpperCase() === "PUT" || this.rng.chance(0.2) ? '{"uuid":"method-fuzz"}' : "";
    return this.#request("method", method, target, this.#baseHeaders(body), body);
  }

  #targetCase(): FuzzCase {
    const segment = this.#pick([
      "%2E%2E", "%2e", ".", "..", "%00", "a%00b", "%ZZ", "%", "%2", "%2F", "a%2Fb", "%C0%AE", "%E2%80%AE", "%F0%9F%98%80",
      "%FF%FE", "a;b=c", "a#frag", "a b", "x".repeat(129), "x".repeat(this.rng.int(1_000, 6_000)), "__proto__", "constructor",
      "prototype", "toString", "hasOwnProperty", "%5F%5Fproto%5F%5F", "~health", "a:b", "A.b-C_d:1", this.#utype(),
    ]);
    const path = this.#pick([
      `/api/primary/${segment}`, `//api/primary/${segment}`, `/api//primary/${segment}`, `/api/primary/${segment}/`,
      `/api/primary/${segment}/history`, `/API/primary/${segment}`, `/api/Primary/${segment}`, `/api/primary/${segment}/..`,
      `/api/primary/../health`, `/api/primary/%2E%2E/health`, "//[", "/\\api\\health", `/api/${segment}`, "/api/health/",
    ]);
    const query = this.#pick([
      "", "?", "?uuid=a", "?uuid=a&uuid=b", "?__proto__=1", "?constructor=x&code=", "?%ZZ", "?=&&=", "?uuid=%00",
      "?code=wrong", "?uuid=a&force=1", `?uuid=${"u".repeat(this.rng.int(100, 3_000))}`, "?toString=1", "?uuid[]=a",
    ]);
    const absolute = this.#pick(["", "", "", "http://elsewhere.example", "https://h:8443", "http://user:pw@h", "http://[", "ftp://h", "http://h:99999"]);
    const method = this.#pick(["GET", "GET", "PUT", "DELETE", "HEAD"]);
    const body = method === "PUT" ? `{"uuid":"target-fuzz-${this.rng.int(0, 9)}"}` : "";
    return this.#request("target", method, `${absolute}${path}${query}`, this.#baseHeaders(body), body);
  }

  #headerCase(): FuzzCase {
    const body = `{"uuid":"header-fuzz-${this.rng.int(0, 9)}"}`;
    const length = `Content-Length: ${body.length}`;
    const variants: Array<[string[], string]> = [
      [[length], body], // no Host
      [["Host: a", "Host: b", length], body],
      [["Host: 127.0.0.1", `X-Big: ${"a".repeat(this.rng.int(15_000, 40_000))}`, length], body],
      [["Host: 127.0.0.1", ...Array.from({ length: this.rng.int(100, 3_000) }, (_, index) => `X-H${index}: v`), length], body],
      [["Host: 127.0.0.1", "X-Folded: a", " folded", length], body],
      [["Host: 127.0.0.1", "no colon", length], body],
      [["Host: 127.0.0.1", "Bad Name: v", length], body],
      [["Host: 127.0.0.1", "X-Nul: a\u0000b", length], body],
      [["Host: 127.0.0.1", `${length}`, "Transfer-Encoding: chunked"], `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`],
      [["Host: 127.0.0.1", length, `Content-Length: ${body.length + 1}`], body],
      [["Host: 127.0.0.1", "Content-Length: -1"], body],
      [["Host: 127.0.0.1", "Content-Length: 1e3"], body],
      [["Host: 127.0.0.1", "Content-Length: 99999999999999999999"], body],
      [["Host: 127.0.0.1", "Content-Length: 99999999"], body],
      [["Host: 127.0.0.1", "Transfer-Encoding: gzip"], body],
      [["Host: 127.0.0.1", "Transfer-Encoding: gzip, chunked"], `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`],
      [["Host: 127.0.0.1", "Transfer-Encoding: chunked, chunked"], `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`],
      [["Host: 127.0.0.1", "Transfer-Encoding: chunked"], `${body.length.toString(16)};${"e".repeat(this.rng.int(10, 20_000))}\r\n${body}\r\n0\r\n\r\n`],
      [["Host: 127.0.0.1", "Transfer-Encoding: chunked"], `zz\r\n${body}\r\n0\r\n\r\n`],
      [["Host: 127.0.0.1", "Transfer-Encoding: chunked"], `${(body.length + 5).toString(16)}\r\n${body}\r\n0\r\n\r\n`],
      [["Host: 127.0.0.1", this.#pick(["Content-Encoding: gzip", "Content-Encoding: br", "Content-Encoding: deflate", "Content-Encoding: identity", "Content-Encoding: gzip, identity", "Content-Encoding: x-custom"]), length], body],
      [["Host: 127.0.0.1", this.#pick(["Content-Type: text/plain", "Content-Type: application/x-www-form-urlencoded", "Content-Type: multipart/form-data; boundary=x", "Content-Type: application/json; charset=utf-16", "Content-Type: ;;;", "Content-Type: application/json"]), length], body],
      [["Host: 127.0.0.1", "Expect: 100-continue", length], body],
      [["Host: 127.0.0.1", "Expect: something-else", length], body],
      [["Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade", length], body],
      [["Host: 127.0.0.1", "Upgrade: h2c", "Connection: Upgrade, HTTP2-Settings", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA", length], body],
      [["Host: 127.0.0.1", `x-functions-key: ${this.#token(0, 80)}`, length], body],
      [["Host: 127.0.0.1", "__proto__: x", "constructor: y", length], body],
      [["Host: 127.0.0.1", "Connection: keep-alive, close, upgrade", length], body],
    ];
    const [headers, sent] = this.#pick(variants);
    return this.#request("header", "PUT", `/api/primary/${this.#utype()}`, headers, sent);
  }

  #bodyCase(): FuzzCase {
    const uuid = `body-fuzz-${this.rng.int(0, 99)}`;
    const body = this.#pick<() => Buffer | string>([
      () => `{"uuid":"${uuid}","__proto__":{"uuid":"x"}}`,
      () => `{"__proto__":{"uuid":"${uuid}"}}`,
      () => `{"uuid":"${uuid}","constructor":{"prototype":{"x":1}}}`,
      () => `{"uuid":"${uuid}","uuid":"${uuid}-dup"}`,
      () => `{"uuid":"${uuid}","address":"a","address":5}`,
      () => `${"[".repeat(this.rng.int(100, 2_040))}${"]".repeat(this.rng.int(0, 2_040))}`,
      () => `${'{"a":'.repeat(this.rng.int(100, 800))}1${"}".repeat(this.rng.int(0, 800))}`,
      () => `{"uuid":${this.#pick(["1", "null", "true", "[]", "{}", '""', "1e999", "-0"])}}`,
      () => `{"uuid":"${uuid}","address":${this.#pick(["1", "true", "[]", "{}", '"\\u0000"', '"a\\nb"', `"${"é".repeat(513)}"`, `"${"😀".repeat(257)}"`])}}`,
      () => `{"uuid":"${uuid}","lease":${this.#pick(["1", "true", "[]", "{}", '""', `"${"x".repeat(3_000)}"`])}}`,
      () => `{"uuid":"${uuid}","epoch":9}`,
      () => `{"uuid":"${uuid}",}`,
      () => `{'uuid':'${uuid}'}`,
      () => `{"uuid":NaN}`,
      () => `\ufeff{"uuid":"${uuid}"}`,
      () => Buffer.from(`{"uuid":"${uuid}"}`, "utf16le"),
      () => Buffer.concat([Buffer.from('{"uuid":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}')]),
      () => `{"uuid":"\\ud800${uuid}"}`,
      () => `{"uuid":"${uuid}"}${"\u0000".repeat(this.rng.int(1, 10))}`,
      () => `{"uuid":"${uuid}"} {"uuid":"second"}`,
      () => this.#pick(["null", "[]", '""', "0", "true", " ", "", "{", "}", "{}"]),
      () => this.#sized(uuid, this.#pick([4094, 4095, 4096, 4097, 4098])),
      () => this.#sized(uuid, this.rng.int(4_000, 9_000)),
      () => Buffer.from(Array.from({ length: this.rng.int(1, 4_200) }, () => this.rng.int(0, 255))),
    ])();
    const utype = this.#utype();
    const method = this.rng.chance(0.85) ? "PUT" : this.#pick(["GET", "DELETE"]);
    const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
    const chunked = this.rng.chance(0.2);
    const headers = [
      "Host: 127.0.0.1",
      ...(this.rng.chance(0.7) ? ["Content-Type: application/json"] : []),
      chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${bytes.byteLength}`,
    ];
    const framed = chunked
      ? Buffer.concat([Buffer.from(`${bytes.byteLength.toString(16)}\r\n`), bytes, Buffer.from("\r\n0\r\n\r\n")])
      : bytes;
    return this.#request("body", method, `/api/primary/${utype}`, headers, framed);
  }

  /** POST /api/heartbeat (docs/api.md#participant-heartbeat): malformed, oversized and misused parts, and its 64 KiB limit. */
  #participantCase(): FuzzCase {
    const uuid = `part-fuzz-${this.rng.int(0, 9)}`;
    const role = (): string => `{"utype":"${this.#utype()}","uuid":"${uuid}"}`;
    const body = this.#pick<() => string>([
      () => `{"roles":[${role()},${role()}]}`,
      () => `{"roles":[${role()}],"reads":[{"utype":"${this.#utype()}","standbys":${this.#pick(["true", "false", '"true"', "1", "null"])}}]}`,
      () => `{"members":[{"group":"fuzz-group","member":"m-${this.rng.int(0, 5)}","session":${this.#pick(['"s"', '""', '".."', "1", "null", '"a/b"'])}}]}`,
      () => `{"groups":[{"group":${this.#pick(['"fuzz-group"', '".."', '""', "5"])},"since":${this.#pick(['"x"', "5", "null", `"${"y".repeat(100)}"`])}}]}`,
      () => `{"roles":[${Array.from({ length: this.rng.int(15, 40) }, (_, index) => `{"utype":"fuzz-many-${index}","uuid":"${uuid}"}`).join(",")}]}`,
      () => `{"roles":${this.#pick(['"scheduler"', "[null,1,[],\"x\"]", "{}", "null"])}}`,
      () => `{"roles":[{"utype":"${this.#utype()}","uuid":"${uuid}","__proto__":{"uuid":"x"}}]}`,
      () => `{"roles":[{"utype":"${this.#utype()}","uuid":"${uuid}","lease":"${this.targets.realToken}"}]}`,
      () => `{"roles":[${role()}],"roles":[]}`,
      () => `{"roles":[${role()}],"reads":[{"utype":"${this.targets.holderUtype}"}],"extra":1}`,
      () => `{"roles":[${"[".repeat(this.rng.int(100, 2_000))}`,
      () => this.#pick(["{}", "[]", "null", "", '{"roles":[]}']),
      () => this.#sizedParticipant(uuid, this.#pick([65_534, 65_535, 65_536, 65_537, 70_000])),
    ])();
    const method = this.rng.chance(0.9) ? "POST" : this.#pick(["GET", "PUT", "DELETE"]);
    return this.#request("participant", method, "/api/heartbeat", this.#baseHeaders(body), body);
  }

  /** A participant heartbeat of exactly `bytes` (UTF-8), padded in a lease token that is treated as absent. */
  #sizedParticipant(uuid: string, bytes: number): string {
    const frame = `{"roles":[{"utype":"fuzz-sized","uuid":"${uuid}","lease":""}]}`;
    return frame.replace('""}', `"${"t".repeat(Math.max(0, bytes - frame.length))}"}`);
  }

  /** Forged, truncated and misused tokens: each must be treated as absent, never trusted. */
  #tokenCase(): FuzzCase {
    const real = this.targets.realToken;
    const [version = "", payload = "", signature = ""] = real.split(".");
    const forgedPayload = (): string => {
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as unknown[];
      claims[0] = this.targets.holderUtype;
      claims[1] = `token-fuzz-${this.rng.int(0, 9)}`;
      claims[2] = this.rng.int(1, 1_000);
      return Buffer.from(JSON.stringify(claims)).toString("base64url");
    };
    const token = this.#pick<() => string>([
      () => real,
      () => real.slice(0, this.rng.int(0, real.length - 1)),
      () => {
        const at = this.rng.int(0, real.length - 1);
        return `${real.slice(0, at)}${real[at] === "A" ? "B" : "A"}${real.slice(at + 1)}`;
      },
      () => `${version}.${forgedPayload()}.${signature}`,
      () => `${version}.${forgedPayload()}.`,
      () => `v2.${payload}.${signature}`,
      () => `${real}.${real}`,
      () => this.#token(0, 200),
      () => "..",
      () => "v1..",
    ])();
    const utype = this.rng.chance(0.6) ? this.targets.holderUtype : this.#pick([this.targets.realTokenUtype, ...this.targets.victimUtypes]);
    const uuid = `token-fuzz-${this.rng.int(0, 9)}`;
    if (this.rng.chance(0.3)) {
      return this.#request("token", "DELETE", `/api/primary/${utype}?uuid=${uuid}&lease=${encodeURIComponent(token)}`, ["Host: 127.0.0.1"], "");
    }
    const body = JSON.stringify({ uuid, lease: token });
    return this.#request("token", "PUT", `/api/primary/${utype}`, this.#baseHeaders(body), body);
  }

  #rawCase(): FuzzCase {
    const valid = `GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nx-functions-key: ${this.targets.apiKey}\r\n\r\n`;
    const raw = this.#pick<[string, Buffer | string, number]>([
      ["tls hello", Buffer.from("160301020001000200030300000000000000000000000000000000000000000000000000000000000000", "hex"), 1],
      ["h2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 1],
      ["http/0.9", "GET /api/health\r\n\r\n", 1],
      ["http/1.0 no host", "GET /api/health HTTP/1.0\r\n\r\n", 1],
      ["http/9.9", "GET /api/health HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n", 1],
      ["bare newlines", "GET /api/health HTTP/1.1\nHost: 127.0.0.1\n\n", 1],
      ["CR only", "GET /api/health HTTP/1.1\rHost: 127.0.0.1\r\r", 1],
      ["connect", "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", 1],
      ["connect to a path", "CONNECT /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 1],
      ["random bytes", Buffer.from(Array.from({ length: this.rng.int(1, 2_000) }, () => this.rng.int(0, 255))), 1],
      ["pipelined junk", `${valid}${this.#token(1, 40)} ${this.#token(1, 40)}\r\n\r\n`, 2],
      ["pipelined valid", `${valid}${valid}${valid}`, 3],
      ["pipelined 413", `PUT /api/primary/${this.#utype()} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-functions-key: ${this.targets.apiKey}\r\nContent-Length: 5000\r\n\r\n${"x".repeat(5_000)}${valid}`, 2],
    ]);
    const [label, bytes, responses] = raw;
    return this.#case("raw", label, [this.rng.chance(0.3) ? this.#split(bytes) : bytes].flat(), { responses });
  }

  #request(kind: string, method: string, target: string, given: readonly string[], body: Buffer | string): FuzzCase {
    // Most requests carry the key, so that they reach the routes; the rest meet the 401.
    const keyless = given.some((line) => /^x-functions-key:/i.test(line)) || this.rng.chance(0.08);
    const headers = keyless ? given : [...given, `x-functions-key: ${this.targets.apiKey}`];
    const head = `${method} ${target} HTTP/1.1${CRLF}${headers.map((line) => `${line}${CRLF}`).join("")}${CRLF}`;
    const bytes = Buffer.concat([Buffer.from(head, "utf8"), typeof body === "string" ? Buffer.from(body, "utf8") : body]);
    const label = `${method} ${target.slice(0, 120)} ${JSON.stringify(body.toString().slice(0, 80))}`;
    if (this.rng.chance(0.02)) {
      // The client sends part of the request and goes away: no answer is owed, nothing may be written.
      const part = bytes.subarray(0, this.rng.int(0, bytes.byteLength - 1));
      const pauseMs = this.rng.int(0, 50);
      return {
        ...this.#case(kind, `abandoned ${label}`, [], { abandons: true, method, head: method === "HEAD" }),
        send: async (socket: Socket) => {
          socket.write(part);
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
          socket.destroy();
        },
      };
    }
    const steps = this.rng.chance(0.15) ? this.#split(bytes) : [bytes];
    return this.#case(kind, label, steps, { head: method === "HEAD", method });
  }

  #case(
    kind: string,
    label: string,
    steps: readonly RawStep[],
    options: { responses?: number; timeoutMs?: number; head?: boolean; abandons?: boolean; method?: string },
  ): FuzzCase {
    return {
      kind,
      label,
      steps,
      responses: options.responses ?? 1,
      timeoutMs: options.timeoutMs ?? NORMAL_BOUND_MS,
      head: options.head ?? false,
      abandons: options.abandons ?? false,
      method: options.method,
    };
  }

  /** The same bytes in a few pieces with short pauses: a host must not depend on framing. */
  #split(bytes: Buffer | string): RawStep[] {
    const buffer = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes;
    const steps: RawStep[] = [];
    let at = 0;
    while (at < buffer.byteLength) {
      const next = Math.min(buffer.byteLength, at + this.rng.int(1, Math.max(1, Math.ceil(buffer.byteLength / 3))));
      steps.push(buffer.subarray(at, next), { pauseMs: this.rng.int(0, 20) });
      at = next;
    }
    return steps;
  }

  /** A PUT body of exactly `bytes` bytes whose address is 2-byte characters, so the limit can fall inside one. */
  #sized(uuid: string, bytes: number): string {
    const frame = `{"uuid":"${uuid}","address":""}`;
    const room = Math.max(0, bytes - frame.length);
    return frame.replace('""', `"${"é".repeat(Math.floor(room / 2))}${"a".repeat(room % 2)}"`);
  }

  #baseHeaders(body: string): string[] {
    return ["Host: 127.0.0.1", "Content-Type: application/json", ...(body === "" ? [] : [`Content-Length: ${Buffer.byteLength(body)}`])];
  }

  #utype(): string {
    return this.#pick([this.targets.holderUtype, ...this.targets.victimUtypes, this.targets.realTokenUtype, `fuzz-${this.rng.int(0, 20)}`]);
  }

  #token(min: number, max: number): string {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
    return Array.from({ length: this.rng.int(min, max) }, () => alphabet[this.rng.int(0, alphabet.length - 1)]).join("");
  }

  #pick<T>(items: readonly T[]): T {
    return items[this.rng.int(0, items.length - 1)] as T;
  }
}
