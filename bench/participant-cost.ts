/**
 * What one participant costs on the wire, two builds side by side in one run: for each tree
 * its own Azurite and `ha-module serve`, each behind a counting proxy (bench/compare/
 * wire-proxy.ts), and a fleet of that tree's SDK participants. Two kinds, one phase each:
 *
 * - `hpc`: an HPC head node — three PrimaryElectors (scheduler, broker, session roles) on
 *   one HaClient, one of them with `membership` (a member heartbeat and a group watch).
 *   Two heads per cluster, so there are primaries and standbys.
 * - `plain`: a lone single-role PrimaryElector on its own HaClient, two per role.
 *
 * Counted over the window, per participant: requests to the service per I, store
 * operations per second (the store proxy), and the service process's CPU per second.
 * Needs `npm run build` in each tree.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cpuSeconds, startLineProcess, startService, type LineProcess } from "./helpers/processes.js";
import { startWireProxy, type WireProxy, type WireRecord } from "./helpers/wire-proxy.js";
import { positiveFlag, readArgs } from "./helpers/args.js";
import { treesOf } from "./helpers/trees.js";

const AZURITE = fileURLToPath(new URL("../test/chaos/azurite-process.js", import.meta.url));
const INTERVAL_MS = 1000;
const TIMEOUT_MS = 5000;

const USAGE = `Usage: npm run bench -- participant-cost [--tree [LABEL=]DIR]... [--clusters 10]
                                         [--warmup-ms 8000] [--window-ms 20000] [--json]
                                         [--kinds] [--profile-dir DIR]

What one participant costs, builds side by side in one run: per tree its own Azurite and
\`ha-module serve\`, each behind a counting proxy, and a fleet of that tree's SDK
participants, one phase per kind: HPC head nodes (three roles on one HaClient, one with
membership and a watch; two heads per cluster) and plain single-role electors (two per
role). Per participant: requests per I, store operations per second, service CPU per second.

Options:
  --tree [LABEL=]DIR   a built checkout to measure; more than one side by side (default .)
  --clusters N         clusters of two head nodes, and roles of two plain electors (default 10)
  --warmup-ms MS       settling time before counting (default 8000)
  --window-ms MS       the counted window (default 20000)
  --json               print the figures as one JSON line instead of the table
  --kinds              also print the store operations by method and row kind, and the
                       participants that sent more requests than intervals passed
  --profile-dir DIR    write a CPU profile of each tree's service there (node --cpu-prof)`;
const { values } = readArgs(USAGE, {
  tree: { type: "string", multiple: true, default: ["."] },
  clusters: { type: "string", default: "10" },
  "warmup-ms": { type: "string", default: "8000" },
  "window-ms": { type: "string", default: "20000" },
  json: { type: "boolean", default: false },
  "profile-dir": { type: "string" },
  kinds: { type: "boolean", default: false },
});
const clusters = positiveFlag("clusters", values.clusters);
const warmupMs = positiveFlag("warmup-ms", values["warmup-ms"]);
const windowMs = positiveFlag("window-ms", values["window-ms"]);
const trees = treesOf(values.tree);

/** The part of a tree's SDK the bench drives. */
interface Sdk {
  HaClient: new (options: { endpoint: string }) => object;
  PrimaryElector: new (options: Record<string, unknown>) => { start(): unknown; stop(): Promise<void>; on(event: string, listener: (value: unknown) => void): unknown };
}

interface Side {
  readonly label: string;
  readonly sdk: Sdk;
  readonly service: LineProcess;
  readonly serviceProxy: WireProxy;
  readonly storeProxy: WireProxy;
}

export interface KindFigures {
  readonly tree: string;
  readonly kind: "hpc" | "plain";
  readonly participants: number;
  readonly requestsPerInterval: number;
  readonly storeOpsPerSecond: number;
  readonly serviceCpuMsPerSecond: number | undefined;
  readonly failedRequests: number;
}

const processes: LineProcess[] = [];
const proxies: WireProxy[] = [];
const dataDir = await mkdtemp(join(tmpdir(), "ha-participant-cost-"));
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

async function startSide(label: string, dir: string, index: number): Promise<Side> {
  const azurite = startLineProcess(AZURITE, [join(dataDir, `store-${index}`), "0"]);
  processes.push(azurite);
  const store = await azurite.waitFor((line) => typeof line["connectionString"] === "string", 30_000);
  const azuriteUrl = `http://127.0.0.1:${String(store["port"])}`;
  const storeProxy = await startWireProxy(azuriteUrl);
  proxies.push(storeProxy);
  const cli = join(dir, "dist/shared/cli/main.js");
  const env = { HA_INTERVAL_MS: String(INTERVAL_MS), HA_TIMEOUT_MS: String(TIMEOUT_MS), HA_TABLE_CONNECTION_STRING: String(store["connectionString"]).replace(azuriteUrl, storeProxy.url) };
  const profile = values["profile-dir"] === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${resolve(values["profile-dir"])}`, `--cpu-prof-name=${label}.cpuprofile`];
  const { url, process: service } = await startService(cli, env, profile);
  processes.push(service);
  const serviceProxy = await startWireProxy(url.replace(/\/api$/, ""));
  proxies.push(serviceProxy);
  const sdk = (await import(pathToFileURL(join(dir, "dist/shared/sdk/index.js")).href)) as Sdk;
  return { label, sdk, service, serviceProxy, storeProxy };
}

/** One kind's fleet on one side; resolves to a stop function. */
function startFleet(side: Side, kind: "hpc" | "plain"): { participants: number; stop: () => Promise<void> } {
  const electors: { stop(): Promise<void> }[] = [];
  const elector = (options: Record<string, unknown>): void => {
    const made = new side.sdk.PrimaryElector(options);
    made.on("error", () => {});
    made.start();
    electors.push(made);
  };
  let participants = 0;
  for (let cluster = 0; cluster < clusters; cluster += 1) {
    for (let head = 1; head <= 2; head += 1) {
      const id = `${kind}-${cluster}-${head}`;
      participants += 1;
      const transport = new side.sdk.HaClient({ endpoint: `${side.serviceProxy.url}/p/${id}/api` });
      if (kind === "plain") {
        elector({ utype: `plain-${cluster}`, transport, address: id });
        continue;
      }
      elector({ utype: `c${cluster}-scheduler`, transport, address: id, membership: { member: `head-${head}`, group: `c${cluster}` } });
      elector({ utype: `c${cluster}-broker`, transport, address: id });
      elector({ utype: `c${cluster}-session`, transport, address: id });
    }
  }
  return { participants, stop: async () => void (await Promise.all(electors.map((made) => made.stop()))) };
}

async function measureKind(sides: readonly Side[], kind: "hpc" | "plain"): Promise<KindFigures[]> {
  const fleets = sides.map((side) => startFleet(side, kind));
  await sleep(warmupMs);
  const cpuBefore = sides.map((side) => cpuSeconds(side.service.child.pid));
  sides.forEach((side) => {
    side.serviceProxy.take();
    side.storeProxy.take();
  });
  await sleep(windowMs);
  const figures = sides.map((side, index): KindFigures => {
    const requests = side.serviceProxy.take();
    const storeOps = side.storeProxy.take();
    if (values.kinds) printKinds(side.label, kind, requests, storeOps);
    const cpuAfter = cpuSeconds(side.service.child.pid);
    const before = cpuBefore[index];
    const participants = fleets[index]!.participants;
    const seconds = windowMs / 1000;
    return {
      tree: side.label,
      kind,
      participants,
      requestsPerInterval: requests.length / participants / (windowMs / INTERVAL_MS),
      storeOpsPerSecond: storeOps.length / participants / seconds,
      serviceCpuMsPerSecond: cpuAfter === undefined || before === undefined ? undefined : ((cpuAfter - before) * 1000) / participants / seconds,
      failedRequests: requests.filter((record) => record.status !== undefined && record.status >= 500).length,
    };
  });
  await Promise.all(fleets.map((fleet) => fleet.stop()));
  await sleep(1000);
  return figures;
}

/** Store operations by method and what they touch; participants with more requests than intervals. */
function printKinds(tree: string, kind: string, requests: readonly WireRecord[], storeOps: readonly WireRecord[]): void {
  const count = (keys: readonly string[]): string =>
    [...keys.reduce((map, key) => map.set(key, (map.get(key) ?? 0) + 1), new Map<string, number>())]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, n]) => `${key} ${n}`)
      .join(", ");
  const what = (partition: string | undefined): string => (partition === undefined ? "query" : /-(scheduler|broker|session)$|^plain-/.test(partition) ? "lease" : "member");
  process.stderr.write(`${tree} ${kind} store: ${count(storeOps.map((op) => `${op.method} ${what(op.partition)}`))}\n`);
  const intervals = windowMs / INTERVAL_MS;
  const over = [...requests.reduce((map, request) => map.set(request.participant, (map.get(request.participant) ?? 0) + 1), new Map<string, number>())].filter(([, n]) => n > intervals);
  process.stderr.write(`${tree} ${kind} participants over ${intervals} requests: ${over.map(([id, n]) => `${id} ${n}`).join(", ") || "none"}\n`);
}

try {
  const sides: Side[] = [];
  for (const [index, tree] of trees.entries()) sides.push(await startSide(tree.label, tree.dir, index));
  const figures = [...(await measureKind(sides, "hpc")), ...(await measureKind(sides, "plain"))];
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ clusters, windowMs, intervalMs: INTERVAL_MS, figures })}\n`);
  } else {
    const round = (value: number | undefined, digits: number): string => (value === undefined ? "n/a" : value.toFixed(digits));
    process.stdout.write("| tree | participant | participants | requests per I | service CPU ms per s | store ops per s | 5xx answers |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for (const row of figures) {
      process.stdout.write(
        `| ${row.tree} | ${row.kind} | ${row.participants} | ${round(row.requestsPerInterval, 2)} | ${round(row.serviceCpuMsPerSecond, 2)} | ${round(row.storeOpsPerSecond, 2)} | ${row.failedRequests} |\n`,
      );
    }
  }
} finally {
  await Promise.all(proxies.map((proxy) => proxy.close()));
  await Promise.all(processes.map((child) => child.kill("SIGTERM")));
  await rm(dataDir, { recursive: true, force: true });
}
