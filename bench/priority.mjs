/* global console, process, performance, setImmediate */
// Priorities and preemption (docs/protocol.md#priorities-and-preemption), builds side by side.
// For each tree, its own `ha-module serve` (in-memory embedded Azurite) at the given I and T,
// and child processes of PrimaryElectors of that tree's build, N roles each, all at once:
//
// - crash: a process holds N roles at priority 2, one stands by for each at priority 0 and
//   one at priority 1 (started in that order); once both have seen the holder and stood by
//   for 2·T, the holders' process is SIGKILLed. Measured per role: who took the role, and
//   the time from the SIGKILL to its `elected`.
// - restart: a process holds N roles at priority 0; the preferred one (priority 1, a hold-down
//   of --hold-down) starts, as a machine that comes back. Measured per role: the time from its
//   start to its `elected`, and the gap without a primary: from the holder's `demoted` to it.
// - flap (the simulation's clock, not real time): a holder at priority 0 and a preferred
//   candidate at priority 1 with a hold-down of 30 s that is up 20 s, down 10 s, for 10
//   minutes, against this tree's service code on an injected clock: preemptions counted.
//
// A tree without priorities (main) is run the same way: its electors ignore the options it
// does not know, so its crash figures are of equal priorities, and it never preempts.
import { fork } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { readArgs, positiveFlag } from "../dist/bench/helpers/args.js";
import { startServe, treesOf } from "../dist/bench/helpers/trees.js";
import { percentile } from "../dist/bench/compare/stats.js";

const USAGE = `Usage: npm run bench -- priority [--tree [LABEL=]DIR]... [--timing 1000/5000] [--roles 20]
                                  [--rounds 5] [--hold-down 30000] [--only crash,restart,flap]

Priorities and preemption, builds side by side: a crash of the top holder with standbys of
priorities 1 and 0 (who wins, and the failover time), a preferred candidate that comes back
(its time to the role, and the gap without a primary), with real \`serve\` and elector
processes, N roles at once per round; and a preferred candidate flapping (up 20 s, down 10 s,
a 30 s hold-down, 10 minutes) on the simulation's clock. Prints a JSON line per tree and case,
and a table.

Options:
  --tree [LABEL=]DIR   a built checkout; more than one side by side (default .)
  --timing I/T         the service's I and T in ms (default 1000/5000)
  --roles N            roles per round (default 20)
  --rounds N           rounds per tree and case (default 5): roles × rounds trials
  --hold-down MS       the preferred candidate's preemptAfterMs in the restart case (default 30000)
  --only LIST          the cases to run (default crash,restart,restart-sim,flap); restart-sim is the
                       restart case on the simulation's clock: roles × rounds trials`;
const { values } = readArgs(USAGE, {
  tree: { type: "string", multiple: true, default: ["."] },
  timing: { type: "string", default: "1000/5000" },
  roles: { type: "string", default: "20" },
  rounds: { type: "string", default: "5" },
  "hold-down": { type: "string", default: "30000" },
  only: { type: "string", default: "crash,restart,restart-sim,flap" },
  // Internal: this process is one side of a round.
  child: { type: "string" },
  dir: { type: "string" },
  endpoint: { type: "string" },
  prefix: { type: "string" },
  priority: { type: "string" },
  preempt: { type: "string" },
});

/** One clock for every process of the bench: milliseconds since the epoch, sub-millisecond. */
const now = () => performance.timeOrigin + performance.now();


/** One side: N PrimaryElectors of the tree's build on roles `<prefix>-<n>`; reports `ready` once each is primary or has seen one, then every election and demotion. */
async function runChild() {
  const { PrimaryElector } = await import(path.join(values.dir, "dist/shared/sdk/index.js"));
  const roles = positiveFlag("roles", values.roles);
  const priority = Number(values.priority ?? "0");
  const preemptAfterMs = values.preempt === undefined ? "off" : Number(values.preempt);
  let waiting = roles;
  const seen = new Set();
  const ready = (utype) => {
    if (seen.has(utype)) return;
    seen.add(utype);
    waiting -= 1;
    if (waiting === 0) process.send({ ready: true, at: now() });
  };
  process.send({ started: true, at: now() });
  for (let n = 0; n < roles; n += 1) {
    const utype = `${values.prefix}-${n}`;
    const elector = new PrimaryElector({ utype, endpoint: values.endpoint, address: `${values.child}:${n}`, priority, preemptAfterMs });
    elector.on("error", () => undefined);
    elector.on("primaryChanged", ({ primary }) => primary !== null && ready(utype));
    elector.on("elected", () => {
      ready(utype);
      process.send({ elected: utype, at: now() });
    });
    elector.on("demoted", ({ reason }) => process.send({ demoted: utype, reason, at: now() }));
    elector.start();
  }
  await new Promise(() => {});
}

/** A child of this script; next() resolves with its next message. */
function side(kind, tree, endpoint, prefix, { priority = 0, preempt } = {}) {
  const args = ["--child", kind, "--dir", tree.dir, "--endpoint", endpoint, "--prefix", prefix, "--roles", values.roles, "--priority", String(priority)];
  const child = fork(fileURLToPath(import.meta.url), preempt === undefined ? args : [...args, "--preempt", String(preempt)]);
  const messages = [];
  const log = [];
  const waiters = [];
  child.on("message", (message) => {
    log.push(message);
    if (waiters.length > 0) waiters.shift()(message);
    else messages.push(message);
  });
  const next = () => (messages.length > 0 ? Promise.resolve(messages.shift()) : new Promise((resolve) => waiters.push(resolve)));
  return {
    log,
    /** Until a message that matches. */
    until: async (match) => {
      for (;;) {
        const message = await next();
        if (match(message)) return message;
      }
    },
    kill: () => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once("exit", resolve), child.kill("SIGKILL")))),
  };
}

/** A crash of the top holder: per role, who won and how long after the SIGKILL. */
async function crashRound(tree, endpoint, timing, prefix) {
  const holders = side("top", tree, endpoint, prefix, { priority: 2 });
  await holders.until((m) => m.ready);
  const low = side("low", tree, endpoint, prefix, { priority: 0 });
  await low.until((m) => m.ready);
  const mid = side("mid", tree, endpoint, prefix, { priority: 1 });
  await mid.until((m) => m.ready);
  await sleep(2 * timing.timeoutMs + Math.random() * 2 * timing.intervalMs);
  const killedAt = now();
  await holders.kill();
  const roles = positiveFlag("roles", values.roles);
  const until = killedAt + 4 * timing.timeoutMs;
  while (now() < until) {
    const winners = new Set([...mid.log, ...low.log].filter((m) => m.elected !== undefined && m.at >= killedAt).map((m) => m.elected));
    if (winners.size >= roles) break;
    await sleep(100);
  }
  await sleep(2 * timing.intervalMs);
  const won = new Map();
  for (const [who, log] of [["mid", mid.log], ["low", low.log]]) {
    for (const m of log) if (m.elected !== undefined && m.at >= killedAt && (!won.has(m.elected) || won.get(m.elected).at > m.at)) won.set(m.elected, { who, at: m.at });
  }
  await Promise.all([mid.kill(), low.kill()]);
  const results = [...won.values()];
  const lowWins = results.filter((r) => r.who === "low").map((r) => Math.round(r.at - killedAt));
  // Elections before the kill (the holder lost a role under load before it was killed): not failovers of the crash.
  const before = [...mid.log, ...low.log].filter((m) => m.elected !== undefined && m.at < killedAt).length;
  return { failovers: results.map((r) => r.at - killedAt), byPriority1: results.filter((r) => r.who === "mid").length, byPriority0: lowWins.length, lowWins, before, unfinished: roles - won.size };
}

/** A preferred candidate that comes back: per role, its time to the role and the gap without a primary. */
async function restartRound(tree, endpoint, timing, prefix, holdMs) {
  const fallback = side("fallback", tree, endpoint, prefix, { priority: 0 });
  await fallback.until((m) => m.ready);
  await sleep(Math.random() * timing.intervalMs);
  const preferred = side("preferred", tree, endpoint, prefix, { priority: 1, preempt: holdMs });
  const { at: startedAt } = await preferred.until((m) => m.started);
  const roles = positiveFlag("roles", values.roles);
  const until = startedAt + holdMs + 6 * timing.timeoutMs;
  while (now() < until && preferred.log.filter((m) => m.elected !== undefined).length < roles) await sleep(200);
  const toRole = [];
  const gaps = [];
  for (const m of preferred.log) {
    if (m.elected === undefined) continue;
    toRole.push(m.at - startedAt);
    const demoted = fallback.log.findLast((d) => d.demoted === m.elected && d.at <= m.at);
    if (demoted !== undefined) gaps.push(m.at - demoted.at);
  }
  const preempted = fallback.log.filter((m) => m.demoted !== undefined && m.reason === "preempted").length;
  await Promise.all([preferred.kill(), fallback.kill()]);
  return { toRole, gaps, preempted, unfinished: roles - toRole.length };
}

/** A minimal injected clock (as the tests' FakeClock): timers fire only inside advance(). */
class ManualClock {
  #now = 1_000_000;
  #seq = 0;
  #timers = new Map();
  now() {
    return this.#now;
  }
  setTimeout(callback, delayMs) {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, delayMs), seq: id, callback });
    return id;
  }
  clearTimeout(handle) {
    this.#timers.delete(handle);
  }
  async advance(ms) {
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const target = this.#now + ms;
    await settle();
    for (;;) {
      let due;
      for (const [id, timer] of this.#timers) if (timer.at <= target && (due === undefined || timer.at < due[1].at || (timer.at === due[1].at && timer.seq < due[1].seq))) due = [id, timer];
      if (due === undefined) break;
      this.#timers.delete(due[0]);
      this.#now = Math.max(this.#now, due[1].at);
      due[1].callback();
      await settle();
    }
    this.#now = target;
    await settle();
  }
}

/** This tree's service over a memory store on `clock`, and a transport to it; `preemptions` counts what it writes. */
async function inProcessService(clock, timing) {
  const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const { LeaseService } = await import(path.join(here, "dist/shared/lease/lease-service.js"));
  const { LeaseTokenSigner } = await import(path.join(here, "dist/shared/lease/lease-token.js"));
  const { MemoryLeaseStore } = await import(path.join(here, "dist/shared/store/memory-store.js"));
  const counted = { preemptions: 0 };
  const service = new LeaseService({
    store: new MemoryLeaseStore(),
    clock,
    monotonic: clock,
    timing,
    tokens: new LeaseTokenSigner("a-bench-secret-that-is-long-enough-for-hmac"),
    storeTimeoutMs: 2000,
    metrics: { heartbeat: () => undefined, release: () => undefined, preemption: () => (counted.preemptions += 1) },
  });
  const transport = {
    getPrimary: (utype) => service.getPrimary(utype),
    heartbeat: (utype, request) => service.heartbeat({ utype, ...request }),
    release: (utype, uuid, options) => service.release({ utype, uuid, lease: options?.lease }),
    withdraw: (utype, uuid) => service.withdrawStandby(utype, uuid),
  };
  return { counted, transport };
}

/** A small seeded stream of draws in [0, 1) (mulberry32), for the electors' poll jitter and the start offsets. */
function draws(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A preferred candidate that comes back, on the injected clock: its time to the role and the gap without a primary (trial `seed`). */
async function restartTrialSim(tree, timing, holdMs, seed) {
  const { PrimaryElector } = await import(path.join(tree.dir, "dist/shared/sdk/election/primary-elector.js"));
  const clock = new ManualClock();
  const { transport } = await inProcessService(clock, timing);
  const random = draws(seed);
  let n = 0;
  const make = (name, options) => new PrimaryElector({ utype: "restart", transport, clock, address: `${name}:1`, newUuid: () => `${name}-${++n}`, random, ...options });
  const holder = make("head-2", { priority: 0 });
  let demotedAt;
  holder.on("demoted", () => (demotedAt ??= clock.now()));
  holder.start();
  await clock.advance(2 * timing.intervalMs + random() * timing.intervalMs);
  const preferred = make("head-1", { priority: 1, preemptAfterMs: holdMs });
  let electedAt;
  preferred.on("elected", () => (electedAt ??= clock.now()));
  const startedAt = clock.now();
  preferred.start();
  while (electedAt === undefined && clock.now() - startedAt < holdMs + 10 * timing.timeoutMs) await clock.advance(10);
  await Promise.all([holder.stop(), preferred.stop()]);
  return { toRole: electedAt === undefined ? undefined : electedAt - startedAt, gap: electedAt === undefined || demotedAt === undefined ? undefined : electedAt - demotedAt };
}

/** A preferred candidate flapping (up 20 s, down 10 s, a 30 s hold-down, 10 min), on the injected clock against this tree's service code. */
async function flapTrial(tree, timing) {
  const { PrimaryElector } = await import(path.join(tree.dir, "dist/shared/sdk/election/primary-elector.js"));
  const clock = new ManualClock();
  const { counted, transport } = await inProcessService(clock, timing);
  let n = 0;
  const make = (name, options) => new PrimaryElector({ utype: "flap", transport, clock, address: `${name}:1`, newUuid: () => `${name}-${++n}`, ...options });
  const holder = make("head-2", { priority: 0 });
  const demotions = [];
  holder.on("demoted", ({ reason }) => demotions.push(reason));
  holder.start();
  await clock.advance(2 * timing.intervalMs);
  let flapperHeld = 0;
  for (let elapsed = 0; elapsed < 600_000; elapsed += 30_000) {
    const flapper = make("head-1", { priority: 1, preemptAfterMs: 30_000 });
    flapper.on("elected", () => (flapperHeld += 1));
    flapper.start();
    await clock.advance(20_000);
    await flapper.stop();
    await clock.advance(10_000);
  }
  await holder.stop();
  return { preemptions: counted.preemptions, holderDemotions: demotions.length, flapperElected: flapperHeld };
}

function stats(values_) {
  const sorted = [...values_].sort((a, b) => a - b);
  const r = (x) => (Number.isFinite(x) ? Math.round(x) : null);
  return { n: sorted.length, medianMs: r(percentile(sorted, 50)), p99Ms: r(percentile(sorted, 99)), maxMs: r(sorted.at(-1) ?? Number.NaN) };
}

async function runParent() {
  const trees = treesOf(values.tree);
  const [intervalMs, timeoutMs] = values.timing.split("/").map(Number);
  if (!Number.isSafeInteger(intervalMs) || !Number.isSafeInteger(timeoutMs) || timeoutMs <= 2 * intervalMs) throw new Error(`--timing takes I/T in ms with T > 2·I (got ${JSON.stringify(values.timing)}).`);
  const timing = { intervalMs, timeoutMs };
  const rounds = positiveFlag("rounds", values.rounds);
  const holdMs = positiveFlag("hold-down", values["hold-down"]);
  const only = new Set(values.only.split(","));
  const rows = [];
  const env = { HA_INTERVAL_MS: String(intervalMs), HA_TIMEOUT_MS: String(timeoutMs) };
  for (const tree of trees) {
    const { url, child } = await startServe(tree.dir, [], env);
    if (only.has("crash")) {
      const failovers = [];
      let byPriority1 = 0;
      let byPriority0 = 0;
      let unfinished = 0;
      let beforeKill = 0;
      const lowWins = [];
      for (let r = 0; r < rounds; r += 1) {
        const round = await crashRound(tree, url, timing, `crash-${r}`);
        failovers.push(...round.failovers);
        byPriority1 += round.byPriority1;
        byPriority0 += round.byPriority0;
        unfinished += round.unfinished;
        beforeKill += round.before;
        lowWins.push(...round.lowWins);
      }
      const row = { tree: tree.label, case: "crash", ...timing, ...stats(failovers), byPriority1, byPriority0, lowWinsMs: lowWins, electedBeforeKill: beforeKill, unfinished, beyondTPlusI: failovers.filter((ms) => ms > timeoutMs + intervalMs).length };
      console.log(JSON.stringify(row));
      rows.push(row);
    }
    if (only.has("restart")) {
      const toRole = [];
      const gaps = [];
      let preempted = 0;
      let unfinished = 0;
      for (let r = 0; r < rounds; r += 1) {
        const round = await restartRound(tree, url, timing, `restart-${r}`, holdMs);
        toRole.push(...round.toRole);
        gaps.push(...round.gaps);
        preempted += round.preempted;
        unfinished += round.unfinished;
      }
      const row = { tree: tree.label, case: "restart", ...timing, holdMs, toRole: stats(toRole), gap: stats(gaps), preempted, unfinished, beyondHoldPlus2I: toRole.filter((ms) => ms > holdMs + 2 * intervalMs).length };
      console.log(JSON.stringify(row));
      rows.push(row);
    }
    child.kill("SIGKILL");
    if (only.has("restart-sim")) {
      const toRole = [];
      const gaps = [];
      let unfinished = 0;
      const trials = rounds * positiveFlag("roles", values.roles);
      for (let seed = 1; seed <= trials; seed += 1) {
        const trial = await restartTrialSim(tree, timing, holdMs, seed);
        if (trial.toRole === undefined) unfinished += 1;
        else toRole.push(trial.toRole);
        if (trial.gap !== undefined) gaps.push(trial.gap);
      }
      const row = { tree: tree.label, case: "restart (simulated clock)", ...timing, holdMs, toRole: stats(toRole), gap: stats(gaps), unfinished, beyondHoldPlus2I: toRole.filter((ms) => ms > holdMs + 2 * intervalMs).length };
      console.log(JSON.stringify(row));
      rows.push(row);
    }
    if (only.has("flap")) {
      const row = { tree: tree.label, case: "flap (simulated clock)", ...timing, ...(await flapTrial(tree, timing)) };
      console.log(JSON.stringify(row));
      rows.push(row);
    }
  }
  console.table(rows.map((row) => ({ ...row, toRole: row.toRole === undefined ? undefined : JSON.stringify(row.toRole), gap: row.gap === undefined ? undefined : JSON.stringify(row.gap) })));
  process.exit(0);
}

// Last: the classes and functions above are all defined by now.
if (values.child !== undefined) await runChild();
else await runParent();
