/* global console, process, performance, URL */
// Black-box overload run: one `ha-module serve` (in-memory embedded Azurite) and N roles × 2
// PrimaryElectors (HaClient over HTTP) in one client process, for a few seconds each.
// Reports accepted heartbeats/s, calls/s, 503s/s and the mean fraction of roles with a
// primary after warm-up. `--tree DIR` runs another checkout's dist (e.g. main, built);
// given more than once, the trees take turns at each N (side by side in one run), and a
// markdown table ends the output; `--tree before=/tmp/old` labels a tree.
// `--node-args "--cpu-prof --cpu-prof-dir=/tmp/p"` is passed to each serve process.
// `--out DIR` also writes DIR/overload.json and DIR/overload.svg (roles with a primary, one
// bar per tree at each N; needs `npm run build` first).
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { readArgs } from "../dist/bench/helpers/args.js";
import { startServe, treesOf } from "../dist/bench/helpers/trees.js";

const USAGE = `Usage: npm run bench -- overload-curve [--tree [LABEL=]DIR]... [--out DIR] [--seconds 20]
                                       [--warmup 8] [--node-args ARGS] N...

Black-box overload: one \`ha-module serve\` (in-memory embedded Azurite) and N roles × 2
PrimaryElectors in one client process, ramped in over half the warm-up. Prints accepted
heartbeats/s, calls/s, 503s/s, other failures/s, demotions/s and the share of roles with
a primary (mean and lowest sample, every 0.5 s), per tree and N.

Arguments and options:
  N...                 roles per step, two electors each (e.g. 400 1000)
  --tree [LABEL=]DIR   a built checkout; more than one take turns at each N (default .)
  --out DIR            also write DIR/overload.json and DIR/overload.svg
  --seconds S          the measured window (default 20)
  --warmup S           warm-up before it, the ramp included (default 8)
  --node-args ARGS     passed to each serve's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"`;
const { values, positionals } = readArgs(USAGE, { tree: { type: "string", multiple: true, default: ["."] }, out: { type: "string" }, seconds: { type: "string", default: "20" }, warmup: { type: "string", default: "8" }, "node-args": { type: "string", default: "" } }, { allowPositionals: true });
const trees = treesOf(values.tree);
const seconds = Number(values.seconds);
const warmup = Number(values.warmup);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

async function run(tree, roles) {
  const { PrimaryElector, HaClient } = await import(path.join(tree, "dist/shared/sdk/index.js"));
  const { url, child } = await startServe(tree, values["node-args"].split(" ").filter(Boolean));
  const counts = { calls: 0, accepted: 0, overloaded: 0, failed: 0, demoted: 0 };
  const client = new HaClient({ endpoint: url });
  const counted = (call) => async (...args) => {
    counts.calls += 1;
    try {
      const result = await call(...args);
      if (result?.outcome === "accepted") counts.accepted += 1;
      return result;
    } catch (error) {
      if (error?.status === 503) counts.overloaded += 1;
      else { counts.failed += 1; if (counts.failed === 1 || process.env.DEBUG_OVERLOAD) console.error(String(error?.message ?? error)); }
      throw error;
    }
  };
  const transport = { getPrimary: counted(client.getPrimary.bind(client)), heartbeat: counted(client.heartbeat.bind(client)), release: counted(client.release.bind(client)) };
  const electors = [];
  // Ramped in over the first half of the warm-up: a fleet that starts in one instant is
  // another test (every first call has only retryDelayInMs to be answered in). Each role
  // starts at its own moment on the clock, so a saturated client loop (late timers) does
  // not stretch the ramp: it starts several roles per turn instead.
  const rampStart = performance.now();
  for (let role = 0; role < roles; role += 1) {
    for (let n = 0; n < 2; n += 1) {
      const elector = new PrimaryElector({ utype: `role-${role}`, transport });
      elector.on("demoted", () => (counts.demoted += 1)).on("error", () => {});
      electors.push(elector.start());
    }
    const next = rampStart + ((role + 1) * warmup * 500) / roles;
    if (next > performance.now()) await sleep(next - performance.now());
  }
  await sleep(Math.max(0, rampStart + warmup * 1000 - performance.now()));
  const start = { ...counts };
  const fractions = [];
  const began = performance.now();
  while (performance.now() - began < seconds * 1000) {
    await sleep(500);
    let held = 0;
    for (let role = 0; role < roles; role += 1) if (electors[2 * role].isPrimary() || electors[2 * role + 1].isPrimary()) held += 1;
    fractions.push(held / roles);
  }
  const elapsed = (performance.now() - began) / 1000;
  const rate = (key) => Math.round((counts[key] - start[key]) / elapsed);
  const result = {
    roles,
    electors: roles * 2,
    acceptedPerS: rate("accepted"),
    callsPerS: rate("calls"),
    e503PerS: rate("overloaded"),
    otherFailuresPerS: rate("failed"),
    demotionsPerS: rate("demoted"),
    withPrimary: Number((fractions.reduce((a, b) => a + b, 0) / fractions.length).toFixed(3)),
    minWithPrimary: Number(Math.min(...fractions).toFixed(3)),
  };
  await Promise.race([Promise.all(electors.map((e) => e.stop())), sleep(5000)]);
  child.kill("SIGTERM");
  await sleep(500);
  return result;
}

const rows = [];
for (const roles of positionals.map(Number)) {
  for (const { label, dir } of trees) {
    const row = { tree: label, ...(await run(dir, roles)) };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}
console.log("\n| tree | roles × 2 | roles with a primary (mean, min) | accepted heartbeats/s | calls/s | 503/s | other failures/s | demotions/s |\n|---|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.tree} | ${r.roles} | ${(r.withPrimary * 100).toFixed(1)} %, ${(r.minWithPrimary * 100).toFixed(1)} % | ${r.acceptedPerS} | ${r.callsPerS} | ${r.e503PerS} | ${r.otherFailuresPerS} | ${r.demotionsPerS} |`);
}
if (values.out !== undefined) {
  const { mkdir, writeFile } = await import("node:fs/promises");
  const { barChart } = await import(new URL("../dist/bench/helpers/svg.js", import.meta.url).href);
  const sizes = [...new Set(rows.map((r) => r.roles))];
  const series = trees.map(({ label }) => ({ name: label, values: sizes.map((n) => 100 * (rows.find((r) => r.tree === label && r.roles === n)?.withPrimary ?? Number.NaN)) }));
  await mkdir(values.out, { recursive: true });
  await writeFile(path.join(values.out, "overload.json"), `${JSON.stringify({ command: process.argv.slice(1).join(" "), rows }, null, 2)}\n`);
  await writeFile(path.join(values.out, "overload.svg"), barChart(`Roles with a primary: N roles × 2 electors on one 2-core machine, I = 1 s`, "% of roles", sizes.map((n) => `${n} × 2`), series));
}
process.exit(0);
