import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { startRecordingProxy, type RecordingProxy } from "../helpers/recording-proxy.js";
import { realDelay, waitUntil } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * Lost requests end to end (docs/protocol.md#timing-rules): a real `ha-module serve`, real
 * HTTP through a proxy that loses requests, and a head node's three roles on one HaClient,
 * so their renewals travel as one participant heartbeat. With a service that answers
 * within the floor F = (T − 2I)/8, a lone elector tries a renewal four times before its
 * deadline (after F, 2F and 4F), so it survives three lost in a row; so must each of the
 * three roles. I = 1 s and T = 21 s, so that F = 2375 ms is far above what even a loaded
 * machine's round trips reach: an answer slower than F would make the budget the maximum
 * for T, for any elector, lone or not, and two tries would be all a renewal gets.
 */
const I = 1000;
const T = 21_000;
const ROLES = ["scheduler", "broker", "session"];
const LOST_TRIES = 3;

/** The roles whose renewal (an UpdateHeartBeat with its lease token) a request carries: one through its own route, several in a participant heartbeat. */
function renewalsIn(request: { readonly method: string; readonly path: string; readonly body: string }): string[] {
  const single = /\/primary\/([^/?]+)$/.exec(request.path);
  if (request.method === "PUT" && single !== null) return (JSON.parse(request.body) as { lease?: string }).lease === undefined ? [] : [decodeURIComponent(single[1]!)];
  if (request.method === "POST" && request.path.endsWith("/heartbeat")) {
    const roles = (JSON.parse(request.body) as { roles?: { utype: string; lease?: string }[] }).roles ?? [];
    return roles.filter((part) => part.lease !== undefined).map((part) => part.utype);
  }
  return [];
}

describe("three roles on one HaClient through a proxy that loses requests", () => {
  let service: ServiceProcess;
  let proxy: RecordingProxy;
  const electors: PrimaryElector[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    await Promise.all(electors.map((elector) => elector.stop()));
    await proxy?.close();
    await service?.stop();
  });

  it("each role survives three of its tries lost in a row, as a lone elector does: no demotion, the same epochs", async () => {
    /** Tries lost per role, once armed; a request is lost only while every role it carries has tries left to lose. */
    const lost = new Map<string, number>();
    let armed = false;
    let lostRequests = 0;
    proxy = await startRecordingProxy(service.url, {
      lose: (request) => {
        const roles = renewalsIn(request);
        if (!armed || roles.length === 0 || roles.some((role) => (lost.get(role) ?? 0) >= LOST_TRIES)) return undefined;
        for (const role of roles) lost.set(role, (lost.get(role) ?? 0) + 1);
        // Half of them before the service, half after it renewed (the answer lost).
        return lostRequests++ % 2 === 0 ? "request" : "answer";
      },
    });
    const transport = new HaClient({ endpoint: proxy.url });
    const demotions: string[] = [];
    for (const utype of ROLES) {
      const elector = new PrimaryElector({ utype: `loss-${utype}`, transport, address: "head-1" });
      elector.on("demoted", ({ reason }) => void demotions.push(`${utype}: ${reason}`)).on("error", () => undefined);
      electors.push(elector.start());
    }
    await waitUntil(() => electors.every((elector) => elector.isPrimary()), "every role elected", 30_000);
    // A few renewals answered first: the budget's estimate is the service's round trip.
    await realDelay(4 * I);
    const epochs = electors.map((elector) => elector.epoch);
    const batches = proxy.requests.filter((request) => renewalsIn(request).length === ROLES.length).length;
    armed = true;
    // The tries go after F, 2F and 4F (7F = 16.6 s in all): each role's third is lost, and its
    // fourth, and a renewal after it, come before its deadline, T − 2I = 19 s after the first.
    await waitUntil(() => electors.every((elector) => (lost.get(elector.utype) ?? 0) >= LOST_TRIES), "three tries of every role lost", T);
    await realDelay(T - 2 * I - 3 * ((T - 2 * I) / 8) + I);
    const sent = `lost tries ${JSON.stringify(Object.fromEntries(lost))}; demotions ${JSON.stringify(demotions)}`;
    // The renewals travelled together before the loss: one participant heartbeat carried all three.
    expect(batches, sent).toBeGreaterThan(0);
    expect(demotions, sent).toEqual([]);
    expect(electors.map((elector) => elector.epoch), sent).toEqual(epochs);
    expect(electors.every((elector) => elector.isPrimary()), sent).toBe(true);
  }, 120_000);
});
