import { TableClient } from "@azure/data-tables";
import { randomInt } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { startTestAzurite } from "../helpers/azurite.js";
import { FuzzCaseGenerator, type FuzzCase } from "../helpers/http-fuzz-cases.js";
import { answerProblems } from "../helpers/http-fuzz-checks.js";
import { rawExchange, type RawExchange } from "../helpers/raw-http.js";
import { Prng } from "../helpers/sim/prng.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * Thousands of malformed and hostile requests against `ha-module serve` as a real process
 * on a real Azurite. One seeded PRNG draws every case: a failing run
 * prints its seed, and HA_FUZZ_SEED=<seed> replays it. HA_FUZZ_COUNT sets the number of
 * requests of the main mix (default 2500; the slow and 10 MB clients come on top).
 *
 * Invariants, checked from outside: no answer is a 5xx; every body is the contract's
 * JSON; no exchange hangs; the service still answers at the end and logged no unexpected
 * error; no row changed that an accepted write did not change; and a real elector holds
 * its lease throughout, never demoted, its epoch unchanged.
 */

const SEED = readWholeNumber("HA_FUZZ_SEED", randomInt(2 ** 31));
const COUNT = readWholeNumber("HA_FUZZ_COUNT", 2_500);
const CONCURRENCY = 8;
const API_KEY = "fuzz-key-0123456789";
const TABLE = `fuzz${process.pid}`;
const HOLDER = "fuzz-holder";
const VICTIMS = ["fuzz-victim-0", "fuzz-victim-1", "fuzz-victim-2"];
const DECOY = "fuzz-decoy";

function readWholeNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new Error(`${name} must be a whole number (got "${raw}")`);
  return Number(raw);
}

interface RowState {
  readonly etag: string;
  readonly uuid: string;
  readonly epoch: string;
}

async function snapshot(table: TableClient): Promise<Map<string, RowState>> {
  const rows = new Map<string, RowState>();
  for await (const entity of table.listEntities<Record<string, unknown>>()) {
    rows.set(`${entity.partitionKey}/${entity.rowKey}`, {
      etag: entity.etag,
      uuid: String(entity["uuid"]),
      epoch: String(entity["epoch"]),
    });
  }
  return rows;
}

/** The utype an accepted write names; a body that is not JSON is already a failure of its own. */
function parsedUtype(body: string): string | undefined {
  try {
    const utype = (JSON.parse(body) as { utype?: unknown }).utype;
    return typeof utype === "string" ? utype : undefined;
  } catch {
    return undefined;
  }
}

/** The roles a participant heartbeat's answer shows accepted: each may have been written. */
function acceptedRoles(body: string): string[] {
  try {
    const roles = (JSON.parse(body) as { roles?: unknown }).roles;
    return Array.isArray(roles) ? roles.filter((part: { status?: unknown; utype?: unknown }) => part.status === 200 && typeof part.utype === "string").map((part: { utype: string }) => part.utype) : [];
  } catch {
    return [];
  }
}

/**
 * Runs `count` cases, at most `limit` at a time. Cases are drawn one by one as workers
 * free up, never all at once: drawing thousands in one go blocks this process's event
 * loop, where the holder's elector and Azurite run, for seconds. The draw order, and
 * so the cases of a seed, do not depend on timing.
 */
async function pool<R>(count: number, limit: number, draw: () => FuzzCase, work: (item: FuzzCase) => Promise<R>): Promise<Array<[FuzzCase, R]>> {
  const results: Array<[FuzzCase, R]> = [];
  let drawn = 0;
  const worker = async (): Promise<void> => {
    while (drawn < count) {
      drawn += 1;
      const item = draw();
      results.push([item, await work(item)]);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

describe("the local host under hostile HTTP", () => {
  let azurite: EmbeddedAzurite;
  let service: ServiceProcess;
  let table: TableClient;
  let elector: PrimaryElector | undefined;

  beforeAll(async () => {
    console.log(`http fuzz: seed ${SEED} (replay with HA_FUZZ_SEED=${SEED}), ${COUNT} requests`);
    azurite = await startTestAzurite();
    service = await startServiceProcess({
      HA_TABLE_CONNECTION_STRING: azurite.connectionString,
      HA_TABLE_NAME: TABLE,
      HA_STORE_CREATE: "true",
      HA_API_KEY: API_KEY,
      // A short I keeps the holder renewing often; T − I = 4.5 s of slack for a loaded machine.
      HA_INTERVAL_MS: "500",
      HA_TIMEOUT_MS: "5000",
    });
    table = TableClient.fromConnectionString(azurite.connectionString, TABLE, { allowInsecureConnection: true });
  });
  afterAll(async () => {
    await elector?.stop();
    const code = await service?.stop();
    await azurite?.close();
    expect(code).toBe(0);
  });

  it(`answers hostile requests with the contract's JSON, writes nothing it refuses, and keeps the holder's lease (seed ${SEED})`, async () => {
    const port = Number(new URL(service.url).port);
    const put = async (utype: string, body: unknown): Promise<Record<string, unknown>> => {
      const response = await fetch(`${service.url}/primary/${utype}`, {
        method: "PUT",
        headers: { "content-type": "application/json", "x-functions-key": API_KEY },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, unknown>;
    };

    // The holder: a real elector, renewing every I through the fast path all along.
    const holder = new PrimaryElector({ utype: HOLDER, endpoint: service.url, apiKey: API_KEY, address: "holder:1" });
    elector = holder;
    const demotions: string[] = [];
    // What the holder went through, with times from the fuzz start, to explain a demotion.
    const journal: string[] = [];
    let fuzzStart = performance.now();
    const note = (line: string): void => {
      journal.push(`${((performance.now() - fuzzStart) / 1000).toFixed(2)} s ${line}`);
    };
    let elections = 0;
    holder.on("demoted", ({ reason }) => {
      demotions.push(reason);
      note(`demoted: ${reason}`);
    });
    holder.on("error", (error) => note(`error: ${error.message}`));
    const elected = new Promise<void>((resolve) =>
      holder.on("elected", () => {
        elections += 1;
        resolve();
      }),
    );
    holder.start();
    await Promise.race([elected, new Promise((_, reject) => setTimeout(() => reject(new Error("the holder was not elected within 20 s")), 20_000))]);
    const epoch = holder.epoch;

    for (const [index, utype] of VICTIMS.entries()) await put(utype, { uuid: `victim-holder-${index}` });
    const decoy = await put(DECOY, { uuid: "decoy-holder" });
    const before = await snapshot(table);

    const generator = new FuzzCaseGenerator(new Prng(SEED), {
      holderUtype: HOLDER,
      victimUtypes: VICTIMS,
      realToken: String(decoy["lease"]),
      realTokenUtype: DECOY,
      apiKey: API_KEY,
    });
    const slow = generator.slowCases();
    const big = generator.bigCases();
    const send = (fuzzCase: FuzzCase): Promise<RawExchange> =>
      rawExchange(port, fuzzCase.steps, {
        timeoutMs: fuzzCase.timeoutMs,
        responses: fuzzCase.responses,
        head: fuzzCase.head,
        ...(fuzzCase.send === undefined ? {} : { send: fuzzCase.send }),
      });
    const started = performance.now();
    fuzzStart = started;
    // The slow clients hold their connections while the mix runs past them.
    const [slowResults, mixResults, bigResults] = await Promise.all([
      Promise.all(slow.map(async (fuzzCase): Promise<[FuzzCase, RawExchange]> => [fuzzCase, await send(fuzzCase)])),
      pool(COUNT, CONCURRENCY, () => generator.next(), send),
      pool(big.length, 1, () => big.shift() as FuzzCase, send),
    ]);
    const elapsedMs = performance.now() - started;
    const results = [...slowResults, ...mixResults, ...bigResults];

    // Per exchange: bounded, answered, never 5xx, always the contract's JSON.
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    const written = new Set<string>();
    for (const [fuzzCase, exchange] of results) {
      for (const problem of answerProblems(fuzzCase, exchange)) failures.push(`[${fuzzCase.kind}] ${fuzzCase.label}: ${problem}`);
      for (const response of exchange.responses) {
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const accepted = response.status >= 200 && response.status < 300;
        if (accepted && (fuzzCase.method === "PUT" || fuzzCase.method === "DELETE")) {
          const utype = parsedUtype(response.body);
          if (utype !== undefined) written.add(utype);
        }
        if (accepted && fuzzCase.method === "POST") for (const utype of acceptedRoles(response.body)) written.add(utype);
      }
    }
    const summary = [...statuses.entries()].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(" ");
    console.log(
      `http fuzz: seed ${SEED}: ${results.length} exchanges in ${(elapsedMs / 1000).toFixed(1)} s; answers ${summary}; ` +
        `${failures.length} failures; accepted writes to ${[...written].sort().join(", ") || "nothing"}; ` +
        `holder: ${holder.stats().heartbeatRoundTrip.count} heartbeats, p99 ${holder.stats().heartbeatRoundTrip.p99Ms?.toFixed(0) ?? "-"} ms, ` +
        `${journal.length} events${journal.length > 0 ? `:\n  ${journal.slice(0, 40).join("\n  ")}` : ""}`,
    );
    expect(failures.slice(0, 30), `seed ${SEED}: ${failures.length} failures`).toEqual([]);

    // The service still answers a valid request, and never fell back on its 500.
    const health = await fetch(`${service.url}/health`, { headers: { "x-functions-key": API_KEY } });
    expect(health.status).toBe(200);
    expect(service.child.exitCode).toBeNull();
    expect(service.output()).not.toMatch(/unexpected error/);

    // The holder kept its lease throughout: one term, never demoted.
    expect(demotions, `seed ${SEED}`).toEqual([]);
    expect(elections).toBe(1);
    expect(holder.isPrimary()).toBe(true);
    expect(holder.epoch).toBe(epoch);

    // No row changed that an accepted write did not change; the holder's only by renewals.
    const after = await snapshot(table);
    const holderKey = `${HOLDER}/lease`;
    expect(after.get(holderKey)).toMatchObject({ uuid: holder.uuid, epoch: before.get(holderKey)?.epoch });
    const unexplained = [...new Set([...before.keys(), ...after.keys()])].filter((key) => {
      if (key === holderKey) return false;
      if (before.get(key)?.etag === after.get(key)?.etag) return false;
      return !written.has(key.split("/")[0] ?? "");
    });
    expect(unexplained, `seed ${SEED}: rows changed without an accepted write`).toEqual([]);
  }, 60_000 + COUNT * 20);
});
