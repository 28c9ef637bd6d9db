import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * docs/protocol.md#the-stores-durability-assumption: an answered write of `npm start`'s embedded store survives a crash of the
 * process. Every start of `ha-module serve` on one HA_DATA_DIR checks that all writes
 * answered before the previous SIGKILL are there, writes to every role at once (so the
 * writes share flushes), and is SIGKILLed the moment the last answer arrives.
 *
 * Two kinds of start, because GET shows only a live lease and a takeover needs an
 * expired one:
 * - "check": T = 120 s. GET must show each role's last answered holder, epoch and
 *   renewedAt exactly; then the holder renews (a one-write merge with its token).
 * - "takeover": T = 3 ms, so every lease has expired. A new uuid takes each role over,
 *   and its epoch must be exactly one more than the last answered one (a lost write
 *   would hand out an old epoch again); then the new holder renews.
 */
const STARTS = ["takeover", "check", "check", "takeover", "check"] as const;
const ROLES = 6;

const TIMING = {
  check: { HA_INTERVAL_MS: "1000", HA_TIMEOUT_MS: "120000" },
  takeover: { HA_INTERVAL_MS: "1", HA_TIMEOUT_MS: "3" },
};

interface Answered {
  readonly uuid: string;
  readonly epoch: number;
  readonly renewedAt: string;
  readonly lease: string;
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? null : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function heartbeat(api: string, utype: string, body: object): Promise<Answered> {
  const reply = await call(api, "PUT", `/primary/${utype}`, body);
  expect(reply.status, `heartbeat of ${utype}: ${JSON.stringify(reply.body)}`).toBe(200);
  const primary = reply.body["primary"] as { uuid: string; epoch: number; renewedAt: string };
  return { uuid: primary.uuid, epoch: primary.epoch, renewedAt: primary.renewedAt, lease: reply.body["lease"] as string };
}

describe("npm start's embedded store keeps every answered write across SIGKILL", () => {
  let dataDir: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "ha-durability-"));
  });
  afterAll(async () => {
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it(`${STARTS.length} starts of write, SIGKILL, restart: nothing answered is lost and no epoch goes back`, async () => {
    const utypes = Array.from({ length: ROLES }, (_, i) => `durable${i}`);
    const answered = new Map<string, Answered>();
    for (const [start, kind] of STARTS.entries()) {
      service = await startServiceProcess({
        HA_IN_MEMORY: "false",
        HA_DATA_DIR: dataDir,
        // Lease tokens stay valid across restarts.
        HA_LEASE_SECRET: "durability-test-secret-0123456789abcdef",
        ...TIMING[kind],
      });
      const api = service.url;
      const written = await Promise.all(
        utypes.map(async (utype): Promise<Answered> => {
          const last = answered.get(utype);
          if (kind === "check") {
            const seen = await call(api, "GET", `/primary/${utype}`);
            expect(seen.body["primary"], `start ${start}: ${utype} after SIGKILL`).toMatchObject({
              uuid: last!.uuid,
              epoch: last!.epoch,
              renewedAt: last!.renewedAt,
            });
            return heartbeat(api, utype, { uuid: last!.uuid, lease: last!.lease });
          }
          const uuid = `${utype}-holder-${start}`;
          const taken = await heartbeat(api, utype, { uuid });
          // Above the last answered epoch (a lost write would show in the checks' exact holder
          // and renewedAt; the epoch itself is floored by the clock: docs/design/epochs.md).
          expect(taken.epoch, `start ${start}: ${utype} taken over after SIGKILL`).toBeGreaterThan(last?.epoch ?? 0);
          return heartbeat(api, utype, { uuid, lease: taken.lease });
        }),
      );
      // The crash: no chance to save anything after the last answer.
      const exited = once(service.child, "exit");
      service.child.kill("SIGKILL");
      await exited;
      service = undefined;
      written.forEach((write, i) => answered.set(utypes[i]!, write));
    }
    // Each role's last term is the last takeover's, renewed through every check since.
    const lastTakeover = STARTS.lastIndexOf("takeover");
    expect([...answered.values()].map((write) => write.uuid)).toEqual(utypes.map((utype) => `${utype}-holder-${lastTakeover}`));
  });
});
