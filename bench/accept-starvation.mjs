/* global console, process, fetch, AbortSignal, performance, setTimeout, setInterval, URL */
// Shows, with nothing of ha-module, why a CPU-saturated Node HTTP server starves callers
// that must reconnect (docs/benchmarks.md, "Overload"): a plain node:http server that burns
// BURN ms of CPU per request, and N keep-alive clients in another process, each calling
// about once a second with a 1 s timeout. Below capacity nothing fails; above it the
// listen socket's accept queue stands full while the server accepts a few connections per
// second, and a client whose call timed out (its connection closed) cannot get back in.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { readArgs } from "../dist/bench/helpers/args.js";

const USAGE = `Usage: npm run bench -- accept-starvation [--burn 1.6] [--clients 800] [--seconds 15]

Why a CPU-saturated Node HTTP server starves callers that must reconnect, with nothing of
ha-module: a plain node:http server burning --burn ms of CPU per request, and --clients
keep-alive clients in another process calling about once a second with a 1 s timeout.
Prints, every second, the answers and timeouts, and what the server served and accepted.

Options:
  --burn MS       CPU per request (default 1.6)
  --clients N     clients (default 800)
  --seconds S     seconds to report (default 15)`;
const { values } = readArgs(USAGE, { burn: { type: "string", default: "1.6" }, clients: { type: "string", default: "800" }, seconds: { type: "string", default: "15" }, role: { type: "string", default: "main" }, port: { type: "string" } });

if (values.role === "server") {
  const burn = Number(values.burn);
  let accepted = 0;
  let served = 0;
  const server = createServer({ keepAliveTimeout: 5000 }, (_request, response) => {
    served += 1;
    const until = performance.now() + burn;
    while (performance.now() < until);
    response.end("{}");
  });
  server.on("connection", () => (accepted += 1));
  server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
  setInterval(() => {
    console.log(JSON.stringify({ served, accepted }));
    served = 0;
    accepted = 0;
  }, 1000);
} else {
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, "--role", "server", "--burn", values.burn], { stdio: ["ignore", "pipe", "inherit"] });
  process.on("exit", () => child.kill("SIGKILL"));
  const server = [];
  const port = await new Promise((resolve) => {
    let buffered = "";
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const line = JSON.parse(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        if (line.port !== undefined) resolve(line.port);
        else server.push(line);
      }
    });
  });
  let ok = 0;
  let failed = 0;
  const client = async () => {
    for (;;) {
      try {
        await (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) })).text();
        ok += 1;
      } catch {
        failed += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, 800 + Math.random() * 400));
    }
  };
  for (let i = 0; i < Number(values.clients); i += 1) {
    void client();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const seconds = Number(values.seconds);
  for (let s = 0; s < seconds; s += 1) {
    const [okBefore, failedBefore] = [ok, failed];
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const last = server.at(-1) ?? {};
    console.log(`answered ${ok - okBefore}/s, timed out ${failed - failedBefore}/s; server served ${last.served ?? "?"}/s, accepted ${last.accepted ?? "?"} connections/s`);
  }
  process.exit(0);
}
