/* global console, process, URL, structuredClone */
// Spurious leader changes under message loss, two builds side by side in one run: for each
// tree, its own `ha-module serve` (in-memory embedded Azurite) behind the bench's lossy wire
// proxy (bench/compare/wire-proxy.ts: half the lost calls never reach the service, half lose
// the answer after it applied them), and N roles × 2 of that tree's PrimaryElectors. After
// 8 s without loss, LOSS for S seconds; counts elections and demotions by reason (nobody is
// killed, so every one is spurious). Needs `npm run build` in each tree.
//
//   node bench/loss-ab.mjs [--roles 30] [--seconds 120] [--loss 0.1] --tree old=/tmp/old --tree new=.
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { startServe, treesOf } from "./serve-child.mjs";

const { values } = parseArgs({
  options: { roles: { type: "string", default: "30" }, seconds: { type: "string", default: "120" }, loss: { type: "string", default: "0.1" }, tree: { type: "string", multiple: true, default: ["."] } },
});
const trees = treesOf(values.tree);
const { startWireProxy } = await import(new URL("../dist/bench/compare/wire-proxy.js", import.meta.url).href);


const setups = [];
for (const { label, dir } of trees) {
  const { PrimaryElector } = await import(path.join(dir, "dist/shared/sdk/index.js"));
  const proxy = await startWireProxy((await startServe(dir)).url.replace(/\/api$/, ""));
  const counts = { elections: 0, demotions: {} };
  for (let role = 0; role < Number(values.roles); role += 1) {
    for (let n = 0; n < 2; n += 1) {
      const elector = new PrimaryElector({ utype: `r${role}`, endpoint: `${proxy.url}/api` });
      elector
        .on("elected", () => (counts.elections += 1))
        .on("demoted", ({ reason }) => (counts.demotions[reason] = (counts.demotions[reason] ?? 0) + 1))
        .on("error", () => {});
      elector.start();
    }
  }
  setups.push({ label, proxy, counts });
}
await sleep(8000);
const before = setups.map((setup) => structuredClone(setup.counts));
for (const setup of setups) {
  setup.proxy.take();
  setup.proxy.setLoss(Number(values.loss));
}
await sleep(Number(values.seconds) * 1000);
setups.forEach((setup, index) => {
  const calls = setup.proxy.take();
  const demotions = Object.fromEntries(Object.entries(setup.counts.demotions).map(([reason, count]) => [reason, count - (before[index].demotions[reason] ?? 0)]));
  console.log(JSON.stringify({ tree: setup.label, roles: Number(values.roles), seconds: Number(values.seconds), leaderChanges: setup.counts.elections - before[index].elections, demotions, calls: calls.length, lost: calls.filter((call) => call.dropped !== undefined).length }));
});
process.exit(0);
