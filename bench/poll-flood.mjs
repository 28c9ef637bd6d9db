/* global console, process, performance, fetch, AbortSignal */
// Past capacity, the simplest way: one `ha-module serve` (in-memory embedded Azurite) and
// a paced flood of GetPrimary polls over 50 roles for 8 s, each with a 10 s timeout.
// Prints the answers by status and error code (and client-side errors by name) and the
// service's refusals by reason from its /api/metrics. The serve inherits the environment,
// so `HA_SHED_DELAY_MS=…` tries another budget.
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { readArgs } from "../dist/bench/helpers/args.js";
import { startServe } from "../dist/bench/helpers/trees.js";

const USAGE = `Usage: npm run bench -- poll-flood [RATE] [TREE]

Past capacity with polls alone: one \`ha-module serve\` (in-memory embedded Azurite) and a
paced flood of GetPrimary polls over 50 roles for 8 s, each with a 10 s timeout. Prints
one JSON line: the answers by status and error code (client-side errors by name) and the
service's refusals by reason from its /api/metrics. The serve inherits the environment,
so HA_SHED_DELAY_MS=… tries another budget.

Arguments:
  RATE   polls per second (default 500)
  TREE   the built checkout to serve (default .)`;
const { positionals } = readArgs(USAGE, {}, { allowPositionals: true });
const rate = Number(positionals[0] ?? 500);
const tree = path.resolve(positionals[1] ?? ".");
const { url, child } = await startServe(tree);
const counts = {};
const count = (key) => (counts[key] = (counts[key] ?? 0) + 1);
const requests = [];
const began = performance.now();
for (let n = 0; performance.now() - began < 8000; ) {
  const due = Math.floor(((performance.now() - began) / 1000) * rate);
  for (; n < due; n += 1) {
    requests.push(
      fetch(`${url}/primary/r-${n % 50}`, { signal: AbortSignal.timeout(10_000) }).then(
        async (response) => count(`${response.status} ${/"code":"(\w+)"/.exec(await response.text())?.[1] ?? ""}`.trim()),
        (error) => count(error.name),
      ),
    );
  }
  await sleep(10);
}
await Promise.all(requests);
const metrics = await (await fetch(`${url}/metrics`)).text();
const shed = Object.fromEntries([...metrics.matchAll(/^ha_requests_shed_total\{ha_shed_reason="(\w+)"[^}]*\} (\d+)/gm)].map(([, reason, n]) => [reason, Number(n)]));
console.log(JSON.stringify({ tree, rate, shedDelayMs: process.env.HA_SHED_DELAY_MS ?? "default", answers: counts, shed }));
child.kill("SIGTERM");
process.exit(0);
