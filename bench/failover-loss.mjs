/* global console, process, URL, performance, setTimeout */
// Crash failover under message loss, builds side by side in one run. For each tree, its own
// `ha-module serve` (in-memory embedded Azurite, the service's I and T as given) behind the
// bench's lossy wire proxy (bench/helpers/wire-proxy.ts: half the lost calls never reach the
// service, half lose the answer after it applied them). Each round, one process holds N roles
// (its PrimaryElectors started first, spread over I so that their renewals are out of step)
// and another stands by for each role; once every standby has seen its primary, the proxy
// loses the share P of the calls of both, and T plus up to 2·I later the holders' process is
// SIGKILLed. Measured: from the SIGKILL to each standby's `elected`, on one clock (the
// processes' performance.timeOrigin + performance.now()). A standby elected before the kill
// (a spurious failover under loss) is left out and counted. The trees' rounds run at once.
//
// --sim runs the same crash in the simulation instead (test/helpers/sim/crash-failover.ts): the
// real PrimaryElector of each tree on the injected clock against this tree's service code,
// trials 1..N by seed, deterministic and free of the machine's load. Needs `npm run build` in
// each tree.
import { fork } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { readArgs, positiveFlag } from "../dist/bench/helpers/args.js";
import { startServe, treesOf } from "../dist/bench/helpers/trees.js";
import { percentile } from "../dist/bench/compare/stats.js";

const USAGE = `Usage: npm run bench -- failover-loss [--tree [LABEL=]DIR]... [--loss 0.05,0.1] [--timing 1000/5000,200/2000]
                                      [--roles 20] [--rounds 10] [--sim] [--trials 400]

Crash failover (SIGKILL of the holder → a standby elected) under random message loss,
builds side by side in one run: each tree's own \`ha-module serve\` behind a lossy proxy (a
share P of the calls lost, half before the service applied them, half after), per round one
process holding N roles and one standing by for each, the holders SIGKILLed T plus up to
2·I after the loss began. --sim runs the same crash in the simulation (the real elector of
each tree on the injected clock; deterministic). Prints a JSON line per tree and setting,
and a table.

Options:
  --tree [LABEL=]DIR   a built checkout's PrimaryElector; more than one side by side (default .)
  --loss P,...         shares of the calls lost, one setting each (default 0.05,0.1)
  --timing I/T,...     the service's I and T in ms, one setting each (default 1000/5000,200/2000)
  --roles N            roles per round, each a holder and a standby (default 20)
  --rounds N           rounds per tree and setting (default 10)
  --sim                in the simulation instead of real processes
  --trials N           with --sim: trials per tree and setting, seeds 1..N (default 400)`;
const { values } = readArgs(USAGE, {
  tree: { type: "string", multiple: true, default: ["."] },
  loss: { type: "string", default: "0.05,0.1" },
  timing: { type: "string", default: "1000/5000,200/2000" },
  roles: { type: "string", default: "20" },
  rounds: { type: "string", default: "10" },
  sim: { type: "boolean", default: false },
  trials: { type: "string", default: "400" },
  // Internal: this process is one side of a round ("holders" or "standbys").
  child: { type: "string" },
  dir: { type: "string" },
  endpoint: { type: "string" },
  prefix: { type: "string" },
  interval: { type: "string" },
});

/** One clock for every process of the bench: milliseconds since the epoch, sub-millisecond. */
const now = () => performance.timeOrigin + performance.now();

if (values.child !== undefined) await runChild();
else await runParent();

/**
 * One side of a round: N PrimaryElectors of the tree's build, roles `<prefix>-<n>`. Holders
 * start spread over I and say `ready` once all are elected; standbys say `ready` once each has
 * seen a primary, then report every election with its time.
 */
async function runChild() {
  const { PrimaryElector } = await import(path.join(values.dir, "dist/shared/sdk/index.js"));
  const roles = positiveFlag("roles", values.roles);
  const intervalMs = Number(values.interval);
  const holders = values.child === "holders";
  let waiting = roles;
  const done = () => {
    waiting -= 1;
    if (waiting === 0) process.send({ ready: true });
  };
  for (let n = 0; n < roles; n += 1) {
    const utype = `${values.prefix}-${n}`;
    const elector = new PrimaryElector({ utype, endpoint: values.endpoint });
    elector.on("error", () => {});
    if (holders) {
      let elected = false;
      elector.on("elected", () => {
        if (!elected) done();
        elected = true;
      });
      // Each its own phase of the renewal cycle, so that one SIGKILL lands anywhere in it.
      setTimeout(() => elector.start(), Math.random() * intervalMs);
      continue;
    }
    let seen = false;
    elector.on("primaryChanged", ({ primary }) => {
      if (primary === null || seen) return;
      seen = true;
      done();
    });
    elector.on("elected", () => process.send({ elected: utype, at: now() }));
    elector.start();
  }
  await new Promise(() => {});
}

/** A child of this script; next() resolves with its next message. */
function side(kind, tree, endpoint, prefix, timing) {
  const child = fork(fileURLToPath(import.meta.url), ["--child", kind, "--dir", tree.dir, "--endpoint", endpoint, "--prefix", prefix, "--roles", values.roles, "--interval", String(timing.intervalMs)]);
  const messages = [];
  const waiters = [];
  child.on("message", (message) => (waiters.length > 0 ? waiters.shift()(message) : messages.push(message)));
  return {
    child,
    messages,
    next: () => (messages.length > 0 ? Promise.resolve(messages.shift()) : new Promise((resolve) => waiters.push(resolve))),
    kill: () => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once("exit", resolve), child.kill("SIGKILL")))),
  };
}

/** One round of one tree: N crash failovers at once. */
async function round(tree, proxy, timing, loss, prefix) {
  const endpoint = `${proxy.url}/api`;
  proxy.setLoss(0);
  const holders = side("holders", tree, endpoint, prefix, timing);
  await holders.next();
  const standbys = side("standbys", tree, endpoint, prefix, timing);
  await standbys.next();
  proxy.setLoss(loss);
  await sleep(timing.timeoutMs + Math.random() * 2 * timing.intervalMs);
  const killedAt = now();
  await holders.kill();
  const roles = positiveFlag("roles", values.roles);
  const elected = new Map();
  const until = killedAt + 8 * timing.timeoutMs;
  while (elected.size < roles && now() < until) {
    const message = await Promise.race([standbys.next(), sleep(until - now()).then(() => undefined)]);
    if (message?.elected !== undefined && !elected.has(message.elected)) elected.set(message.elected, message.at);
  }
  await standbys.kill();
  proxy.setLoss(0);
  const times = [...elected.values()];
  return { failovers: times.filter((at) => at >= killedAt).map((at) => at - killedAt), spurious: times.filter((at) => at < killedAt).length, unfinished: roles - elected.size };
}

function summary(label, timing, loss, failovers, extra) {
  const sorted = [...failovers].sort((a, b) => a - b);
  const r = (x) => Math.round(x);
  return {
    tree: label,
    intervalMs: timing.intervalMs,
    timeoutMs: timing.timeoutMs,
    loss,
    n: sorted.length,
    medianMs: r(percentile(sorted, 50)),
    p90Ms: r(percentile(sorted, 90)),
    p99Ms: r(percentile(sorted, 99)),
    maxMs: r(sorted.at(-1) ?? Number.NaN),
    beyondTPlusI: sorted.filter((ms) => ms > timing.timeoutMs + timing.intervalMs).length,
    ...extra,
  };
}

async function runParent() {
  const trees = treesOf(values.tree);
  const losses = values.loss.split(",").map(Number);
  if (losses.some((loss) => !(loss >= 0 && loss < 1))) throw new Error(`--loss takes shares from 0 to 1, comma-separated (got ${JSON.stringify(values.loss)}).`);
  const timings = values.timing.split(",").map((text) => {
    const [intervalMs, timeoutMs] = text.split("/").map(Number);
    if (!Number.isSafeInteger(intervalMs) || !Number.isSafeInteger(timeoutMs) || timeoutMs <= 2 * intervalMs) throw new Error(`--timing takes I/T in ms with T > 2·I, comma-separated (got ${JSON.stringify(text)}).`);
    return { intervalMs, timeoutMs };
  });
  const rows = [];
  if (values.sim) {
    const { crashTrial } = await import(new URL("../dist/test/helpers/sim/crash-failover.js", import.meta.url).href);
    const trials = positiveFlag("trials", values.trials);
    for (const timing of timings) {
      for (const loss of losses) {
        for (const tree of trees) {
          const { PrimaryElector } = await import(path.join(tree.dir, "dist/shared/sdk/election/primary-elector.js"));
          const failovers = [];
          let notHolder = 0;
          for (let seed = 1; seed <= trials; seed += 1) {
            const trial = await crashTrial(seed, { timing, callLoss: loss }, PrimaryElector);
            if (trial.failoverMs === undefined) notHolder += 1;
            else failovers.push(trial.failoverMs);
          }
          const row = summary(tree.label, timing, loss, failovers, { trials, notHolder });
          console.log(JSON.stringify(row));
          rows.push(row);
        }
      }
    }
  } else {
    const { startWireProxy } = await import(new URL("../dist/bench/helpers/wire-proxy.js", import.meta.url).href);
    const rounds = positiveFlag("rounds", values.rounds);
    for (const timing of timings) {
      const env = { HA_INTERVAL_MS: String(timing.intervalMs), HA_TIMEOUT_MS: String(timing.timeoutMs) };
      const services = await Promise.all(
        trees.map(async (tree) => {
          const serve = await startServe(tree.dir, [], env);
          return { tree, serve, proxy: await startWireProxy(serve.url.replace(/\/api$/, "")) };
        }),
      );
      for (const loss of losses) {
        const results = services.map(() => ({ failovers: [], spurious: 0, unfinished: 0 }));
        for (let n = 0; n < rounds; n += 1) {
          const outcomes = await Promise.all(services.map(({ tree, proxy }) => round(tree, proxy, timing, loss, `t${timing.intervalMs}-l${loss}-r${n}`)));
          outcomes.forEach((outcome, k) => {
            results[k].failovers.push(...outcome.failovers);
            results[k].spurious += outcome.spurious;
            results[k].unfinished += outcome.unfinished;
          });
        }
        services.forEach(({ tree }, k) => {
          const row = summary(tree.label, timing, loss, results[k].failovers, { rounds, spurious: results[k].spurious, unfinished: results[k].unfinished });
          console.log(JSON.stringify(row));
          rows.push(row);
        });
      }
      await Promise.all(services.map(async ({ serve, proxy }) => (await proxy.close(), serve.child.kill("SIGKILL"))));
    }
  }
  console.log(`\n| I / T | calls lost | tree | failovers | median | p90 | p99 | max | beyond T + I |`);
  console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- |`);
  const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
  for (const row of rows) {
    console.log(`| ${row.intervalMs} ms / ${row.timeoutMs} ms | ${Math.round(row.loss * 100)} % | ${row.tree} | ${row.n} | ${s(row.medianMs)} | ${s(row.p90Ms)} | ${s(row.p99Ms)} | ${s(row.maxMs)} | ${row.beyondTPlusI} |`);
  }
  process.exit(0);
}
