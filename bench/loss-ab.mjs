/* global console, process, URL, performance, structuredClone, setTimeout */
// Spurious leader changes under message loss, builds and the seed client side by side in one
// run. Each client runs in a process of its own (so that one client's event loop does not
// delay another's timers), with its own `ha-module serve` (in-memory embedded Azurite)
// behind the bench's lossy wire proxy (bench/helpers/wire-proxy.ts: half the lost calls never
// reach the service, half lose the answer after it applied them), and N roles × 2
// participants: each tree's PrimaryElectors, and with --seed the protocol's original client
// (bench/compare/algorithms/seed.ts, this tree's build) against a service of this tree.
// Once every role has a primary (at most 30 s), LOSS for S seconds in all of them at once
// (with --in-turn, one client after another, each alone on the machine);
// counts elections and demotions by reason (nobody is killed, so every one is spurious) and
// samples every 20 ms, per role, whether no participant or two act as primary (from their
// own events, as bench/compare does). --runs R repeats it with fresh processes. Needs
// `npm run build` in each tree. --interval and --timeout set the service's I and T (the seed
// client is told them), --batch puts that many roles of a participant on one
// HaClient (their calls then travel as one participant heartbeat), and --answer-p99 holds
// each answer back for an exponential time with that 99th percentile (a slow service).
import { fork } from "node:child_process";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { positiveFlag, readArgs } from "../dist/bench/helpers/args.js";
import { startServe, treesOf } from "../dist/bench/helpers/trees.js";

const USAGE = `Usage: npm run bench -- loss-ab [--tree [LABEL=]DIR]... [--seed] [--roles 30] [--seconds 60]
                                [--runs 1] [--loss 0.1] [--interval 1000] [--timeout 5000]
                                [--batch 1] [--answer-p99 0] [--standby-after 0] [--in-turn]

Spurious leader changes under message loss, builds (and the protocol's seed client) side
by side in one run: each client in its own process with its own \`ha-module serve\` behind
a lossy proxy (half the lost calls never reach the service, half lose the answer), N roles
× 2 participants; once every role has a primary, the loss starts in all of them at once.
Counts leader changes and demotions (nobody is killed: every one is spurious) and the time
without a primary or with two, sampled every 20 ms. Prints a JSON line per client and run,
and a table per client.

Options:
  --tree [LABEL=]DIR   a built checkout's PrimaryElector; more than one side by side (default .)
  --seed               also the seed client (this tree's bench/compare/algorithms/seed.ts)
  --roles N            roles per client, two participants each (default 30)
  --seconds S          the lossy window (default 60)
  --runs N             repeats, with fresh processes (default 1)
  --loss P             the share of calls lost (default 0.1)
  --interval MS        the service's I (default 1000)
  --timeout MS         the service's T (default 5000)
  --batch N            roles of a participant on one HaClient, batched (default 1: a
                       client per role; the seed client has one per role whatever N is)
  --answer-p99 MS      hold every answer back for a random time, exponential with this
                       99th percentile, once the loss starts (default 0: at once)
  --standby-after MS   start the second participant of each role this much later, so that
                       the first holds every role of its HaClient (default 0: together)
  --in-turn            the clients one after another in each run (the order reversed every
                       run) instead of all at once: none takes CPU from another's timers`;
const { values } = readArgs(USAGE, {
  roles: { type: "string", default: "30" },
  seconds: { type: "string", default: "60" },
  runs: { type: "string", default: "1" },
  loss: { type: "string", default: "0.1" },
  interval: { type: "string", default: "1000" },
  timeout: { type: "string", default: "5000" },
  batch: { type: "string", default: "1" },
  "answer-p99": { type: "string", default: "0" },
  "standby-after": { type: "string", default: "0" },
  "in-turn": { type: "boolean", default: false },
  seed: { type: "boolean", default: false },
  tree: { type: "string", multiple: true, default: ["."] },
  // Internal: this process is one client's side (label=dir, "seed=dir" for the seed client).
  child: { type: "string" },
});
const roles = Number(values.roles);
const seconds = Number(values.seconds);
const loss = Number(values.loss);
const rolesPerHaClient = positiveFlag("batch", values.batch);
const answerP99Ms = Number(values["answer-p99"]);
const standbyAfterMs = Number(values["standby-after"]);
const here = path.resolve(fileURLToPath(new URL("..", import.meta.url)));
/** The service's I and T, which the seed client is told as bench/compare tells it. */
const TIMING = { intervalMs: positiveFlag("interval", values.interval), timeoutMs: positiveFlag("timeout", values.timeout) };
if (TIMING.timeoutMs <= 2 * TIMING.intervalMs) throw new Error(`--timeout must be more than twice --interval (got ${TIMING.timeoutMs} and ${TIMING.intervalMs}).`);
if (!(standbyAfterMs >= 0)) throw new Error(`--standby-after must be 0 or more milliseconds (got ${JSON.stringify(values["standby-after"])}).`);
if (!(answerP99Ms >= 0)) throw new Error(`--answer-p99 must be 0 or more milliseconds (got ${JSON.stringify(values["answer-p99"])}).`);

if (values.child !== undefined) await runChild(treesOf([values.child])[0], values.seed);
else await runParent();

/** One client, N roles × 2, its own service and lossy proxy; driven by the parent over IPC. */
async function runChild({ label, dir }, seed) {
  const { startWireProxy } = await import(new URL("../dist/bench/helpers/wire-proxy.js", import.meta.url).href);
  const serve = await startServe(dir, [], { HA_INTERVAL_MS: String(TIMING.intervalMs), HA_TIMEOUT_MS: String(TIMING.timeoutMs) });
  const proxy = await startWireProxy(serve.url.replace(/\/api$/, ""));
  const counts = { elections: 0, demotions: {} };
  const pairs = [];
  const stops = [];
  const participant = () => ({
    primary: false,
    elected() {
      this.primary = true;
      counts.elections += 1;
    },
    demoted(reason) {
      this.primary = false;
      counts.demotions[reason] = (counts.demotions[reason] ?? 0) + 1;
    },
  });
  const { PrimaryElector, HaClient } = seed ? {} : await import(path.join(dir, "dist/shared/sdk/index.js"));
  // Each participant (one of the pair) of each group of rolesPerHaClient roles shares one HaClient.
  const clients = new Map();
  const transportOf = (role, side) => {
    const key = `${Math.floor(role / rolesPerHaClient)}/${side}`;
    if (!clients.has(key)) clients.set(key, new HaClient({ endpoint: `${proxy.url}/api` }));
    return clients.get(key);
  };
  const { runSeed } = seed ? await import(new URL("../dist/bench/compare/algorithms/seed.js", import.meta.url).href) : {};
  for (let role = 0; role < roles; role += 1) {
    const pair = [participant(), participant()];
    for (const [side, p] of pair.entries()) {
      let stop = () => Promise.resolve();
      const start = () => {
        if (seed) {
          const emit = (line) => (line.event === "elected" ? p.elected() : line.event === "demoted" ? p.demoted(line.reason) : undefined);
          const running = runSeed({ endpoint: `${proxy.url}/api`, utype: `r${role}`, ...TIMING, emit });
          stop = () => running.stop();
        } else {
          const elector = new PrimaryElector({ utype: `r${role}`, ...(rolesPerHaClient > 1 ? { transport: transportOf(role, side) } : { endpoint: `${proxy.url}/api` }) });
          elector
            .on("elected", () => p.elected())
            .on("demoted", ({ reason }) => p.demoted(reason))
            .on("error", () => {});
          elector.start();
          stop = () => elector.stop();
        }
      };
      // The second participant of each role may start later, so that the first holds every role of its HaClient.
      if (side === 1 && standbyAfterMs > 0) setTimeout(start, standbyAfterMs);
      else start();
      stops.push(() => stop());
    }
    pairs.push(pair);
  }
  const settled = performance.now() + 30_000;
  while (pairs.some((pair) => !pair.some((p) => p.primary)) && performance.now() < settled) await sleep(100);
  process.send({ ready: label });
  await new Promise((resolve) => process.once("message", resolve));
  const before = structuredClone(counts);
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  proxy.take();
  proxy.setLoss(loss);
  proxy.setAnswerDelay(answerP99Ms);
  let samples = 0;
  let without = 0;
  let two = 0;
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    await sleep(20);
    samples += 1;
    for (const pair of pairs) {
      const acting = pair.filter((p) => p.primary).length;
      if (acting === 0) without += 1;
      if (acting > 1) two += 1;
    }
  }
  proxy.setLoss(0);
  proxy.setAnswerDelay(0);
  lag.disable();
  const calls = proxy.take();
  // Round trips as the proxy saw them (the service's time and the hold), answered calls only.
  const answered = calls.filter((call) => call.dropped === undefined && call.durationMs !== undefined).map((call) => call.durationMs + (call.heldMs ?? 0)).sort((a, b) => a - b);
  const percentile = (p) => (answered.length === 0 ? 0 : Math.round(answered[Math.min(answered.length - 1, Math.floor((p / 100) * answered.length))]));
  const demotions = Object.fromEntries(
    Object.entries(counts.demotions)
      .map(([reason, count]) => [reason, count - (before.demotions[reason] ?? 0)])
      .filter(([, count]) => count > 0),
  );
  process.send({
    tree: label,
    roles,
    seconds,
    loss,
    timing: TIMING,
    rolesPerHaClient: seed ? 1 : rolesPerHaClient,
    answerMs: { p50: percentile(50), p99: percentile(99), overFloor: answered.filter((ms) => ms > (TIMING.timeoutMs - 2 * TIMING.intervalMs) / 8).length / Math.max(1, answered.length) },
    leaderChanges: counts.elections - before.elections,
    demotions,
    withoutPrimaryShare: without / (samples * roles),
    twoPrimariesShare: two / (samples * roles),
    calls: calls.length,
    lost: calls.filter((call) => call.dropped !== undefined).length,
    eventLoopDelayMs: { p99: Math.round(lag.percentile(99) / 1e6), max: Math.round(lag.max / 1e6) },
  });
  await Promise.race([Promise.all(stops.map((stop) => stop())), sleep(10_000)]);
  process.exit(0);
}

/** One window of `clients`, each in its own process: they settle, then the loss starts in all of them at once. */
async function runClients(clients) {
  const children = clients.map(({ spec, seed }) => {
    const child = fork(fileURLToPath(import.meta.url), [
      ...["--child", spec, "--roles", String(roles), "--seconds", String(seconds), "--loss", String(loss)],
      ...["--interval", String(TIMING.intervalMs), "--timeout", String(TIMING.timeoutMs), "--batch", String(rolesPerHaClient), "--answer-p99", String(answerP99Ms), "--standby-after", String(standbyAfterMs)],
      ...(seed ? ["--seed"] : []),
    ]);
    const messages = [];
    const waiters = [];
    child.on("message", (message) => (waiters.length > 0 ? waiters.shift()(message) : messages.push(message)));
    const next = () => (messages.length > 0 ? Promise.resolve(messages.shift()) : new Promise((resolve) => waiters.push(resolve)));
    return { child, next };
  });
  process.on("exit", () => children.forEach(({ child }) => child.kill("SIGKILL")));
  await Promise.all(children.map(({ next }) => next()));
  children.forEach(({ child }) => child.send("go"));
  const results = await Promise.all(children.map(({ next }) => next()));
  await Promise.all(children.map(({ child }) => new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve()))));
  return results;
}

async function runParent() {
  const clients = treesOf(values.tree).map((tree) => ({ spec: `${tree.label}=${tree.dir}`, seed: false }));
  if (values.seed) clients.push({ spec: `seed=${here}`, seed: true });
  const all = [];
  for (let run = 1; run <= Number(values.runs); run += 1) {
    // Side by side: every client at once. In turn: one after another, the order reversed
    // every run, so that no client's processes take CPU from another's timers.
    const order = run % 2 === 1 ? clients : [...clients].reverse();
    for (const group of values["in-turn"] ? order.map((client) => [client]) : [clients]) {
      for (const result of await runClients(group)) {
        console.log(JSON.stringify({ run, ...result }));
        all.push({ run, ...result });
      }
    }
  }

  // The sum over the runs, one row per client: the table docs/benchmarks.md shows.
  const percent = (share) => `${(share * 100).toFixed(2)} %`;
  console.log(`\nI = ${TIMING.intervalMs} ms, T = ${TIMING.timeoutMs} ms, ${Math.round(loss * 100)} % of calls lost, ${rolesPerHaClient} role(s) per HaClient, answers held back p99 ${answerP99Ms} ms, standbys started ${standbyAfterMs} ms later`);
  console.log(`| client | runs × roles × 2, s | calls lost / calls | answers p50 / p99 ms (over the floor) | spurious leader changes (per run) | demotions | time without a primary | time with two acting primaries | client event-loop delay p99 / max ms |`);
  console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- |`);
  for (const label of [...new Set(all.map((result) => result.tree))]) {
    const mine = all.filter((result) => result.tree === label);
    const demotions = {};
    for (const result of mine) for (const [reason, count] of Object.entries(result.demotions)) demotions[reason] = (demotions[reason] ?? 0) + count;
    const total = Object.values(demotions).reduce((a, b) => a + b, 0);
    const sum = (key) => mine.reduce((s, result) => s + result[key], 0);
    const reasons = Object.entries(demotions).map(([reason, count]) => `${count} ${reason}`).join(", ");
    const lag = `${Math.max(...mine.map((r) => r.eventLoopDelayMs.p99))} / ${Math.max(...mine.map((r) => r.eventLoopDelayMs.max))}`;
    const answers = `${Math.max(...mine.map((r) => r.answerMs.p50))} / ${Math.max(...mine.map((r) => r.answerMs.p99))} (${((100 * mine.reduce((s, r) => s + r.answerMs.overFloor, 0)) / mine.length).toFixed(1)} %)`;
    console.log(
      `| ${label} | ${mine.length} × ${roles} × 2, ${seconds} s | ${sum("lost")} / ${sum("calls")} | ${answers} | ${sum("leaderChanges")} (${mine.map((r) => r.leaderChanges).join(", ")}) | ${total}${reasons === "" ? "" : ` (${reasons})`} | ${percent(sum("withoutPrimaryShare") / mine.length)} | ${percent(sum("twoPrimariesShare") / mine.length)} | ${lag} |`,
    );
  }
  process.exit(0);
}
