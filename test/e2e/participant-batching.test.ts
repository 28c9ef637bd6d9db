import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { startRecordingProxy, type RecordingProxy } from "../helpers/recording-proxy.js";
import { CliProcess, realDelay, waitUntil } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * One request per participant per I (docs/sdk.md#one-request-per-participant), end to end:
 * real `ha-module serve`, real HTTP, each participant behind its own recording proxy so its
 * requests can be counted. Two HPC-like head nodes (three roles each on one HaClient, the
 * first role with `membership`), and `ha-module elect --member` as a process. Assertions are
 * on what was sent and what was elected, never on how fast (the machine may be busy).
 */
const I = 300;
const T = 1500;
const ROLES = ["scheduler", "broker", "session"];

interface Batch {
  readonly roles: number;
  readonly reads: number;
  readonly members: number;
  readonly groups: number;
}

function batchesOf(proxy: RecordingProxy, from: number): { batches: Batch[]; singles: string[] } {
  const batches: Batch[] = [];
  const singles: string[] = [];
  for (const request of proxy.requests.slice(from)) {
    if (request.method === "POST" && request.path === "/api/heartbeat") {
      const body = JSON.parse(request.body) as Record<string, unknown[] | undefined>;
      batches.push({ roles: body["roles"]?.length ?? 0, reads: body["reads"]?.length ?? 0, members: body["members"]?.length ?? 0, groups: body["groups"]?.length ?? 0 });
    } else {
      singles.push(`${request.method} ${request.path}`);
    }
  }
  return { batches, singles };
}

/** A head node's whole cycle in one request: its three roles (renewed, announced or read), its member heartbeat and its group poll. */
const whole = (batch: Batch): boolean => batch.roles + batch.reads === ROLES.length && batch.members === 1 && batch.groups === 1;

describe("participant heartbeat through ha-module serve", () => {
  let service: ServiceProcess;
  const proxies: RecordingProxy[] = [];
  const electors: PrimaryElector[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    await Promise.all(electors.map((elector) => elector.stop()));
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await service?.stop();
  });

  it("two head nodes of three roles, a membership and a watch each: one request per I carries all five, every role has one primary, both see each other", async () => {
    const heads = ["head-1", "head-2"];
    for (const head of heads) {
      const proxy = await startRecordingProxy(service.url);
      proxies.push(proxy);
      const transport = new HaClient({ endpoint: proxy.url });
      ROLES.forEach((role, index) => {
        const elector = new PrimaryElector({ utype: `hpc-${role}`, transport, address: head, ...(index === 0 ? { membership: { member: head, group: "hpc" } } : {}) });
        elector.on("error", () => undefined);
        electors.push(elector.start());
      });
    }
    const primaries = (): string[] => ROLES.map((role) => electors.filter((elector) => elector.utype === `hpc-${role}` && elector.isPrimary()).map((elector) => elector.address ?? "").join("+"));
    await waitUntil(() => primaries().every((holder) => holder === "head-1" || holder === "head-2"), "a primary for every role", 30_000);
    const watchers = electors.filter((elector) => elector.membership !== undefined).map((elector) => elector.membership!);
    await waitUntil(
      () => watchers.every((membership) => heads.every((head) => membership.members().some((member) => member.member === head && member.state === "active"))),
      "both heads active in both watchers",
      30_000,
    );

    // Steady state: count what each participant sends over a dozen intervals.
    const marks = proxies.map((proxy) => proxy.requests.length);
    await realDelay(12 * I);
    for (const [index, proxy] of proxies.entries()) {
      const { batches, singles } = batchesOf(proxy, marks[index]!);
      const sent = `participant ${heads[index]}: ${JSON.stringify({ batches, singles })}`;
      const parts = (kind: keyof Batch): number => batches.reduce((sum, batch) => sum + batch[kind], 0);
      // One request per I, carrying the parts due: every role (a renewal every I, a
      // standby's poll about every 1.1·I), the member heartbeat every I, and the group poll
      // about every I plus the round trip, as each part alone. A renewal whose answer is
      // slow on a busy machine sends its copy alone (one per role: three at once when the
      // whole batch was slow); two such rounds in 12·I are allowed, a request per part and
      // per interval (60 here) never is.
      expect(batches.length, sent).toBeLessThanOrEqual(14);
      expect(batches.filter(whole).length, sent).toBeGreaterThanOrEqual(3);
      expect(parts("members"), sent).toBeGreaterThanOrEqual(9);
      expect(parts("groups"), sent).toBeGreaterThanOrEqual(5);
      expect(parts("roles") + parts("reads"), sent).toBeGreaterThanOrEqual(24);
      expect(singles.length, sent).toBeLessThanOrEqual(2 * ROLES.length);
    }
    // Exactly one primary per role, and it is not shared.
    for (const holder of primaries()) expect(["head-1", "head-2"]).toContain(holder);
  });

  it("ha-module elect --member: the role, the member heartbeat and the group poll go as one request, and it prints the election and the membership", async () => {
    const proxy = await startRecordingProxy(service.url);
    proxies.push(proxy);
    const elect = new CliProcess("elect", ["elect", "cli-role", "--member", "node-7", "--group", "cli-group", "--endpoint", proxy.url]);
    try {
      await elect.waitFor((event) => event.event === "elected", { timeoutMs: 30_000 });
      await elect.waitFor((event) => event.event === "joined", { timeoutMs: 30_000 });
      await elect.waitFor((event) => event.event === "memberJoined" && event["member"] === "node-7", { timeoutMs: 30_000 });
      const mark = proxy.requests.length;
      await realDelay(8 * I);
      const { batches } = batchesOf(proxy, mark);
      expect(batches.filter((batch) => batch.roles + batch.reads === 1 && batch.members === 1 && batch.groups === 1).length, JSON.stringify(batches)).toBeGreaterThanOrEqual(2);
    } finally {
      await elect.kill();
    }
  });
});
