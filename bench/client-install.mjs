#!/usr/bin/env node
// What a worker installs, and how fast the command it gets starts, for builds side by side:
// each tree's client is packed as that tree says (scripts/pack-client.mjs where the tree
// has it; otherwise `npm pack`, as the README said before the client package existed),
// installed into an empty project with a plain `npm install <tarball>` (no flags; npm's
// cache as it is), `--installs` times per tree, interleaved; then `ha-module --version` is
// timed `--runs` times per way of starting it, interleaved: through `npx`, through the
// installed bin, and the single executable where the tree builds one (scripts/build-exe.mjs).
// A tree given as a git ref is taken with `git archive` into the work directory (this
// tree's node_modules lent to it for its build). Reported per tree: the tarball, the
// installed packages, files and bytes of node_modules, the install's median time, and the
// medians of the start times (wall time, spawn to exit).
import { execFile, execFileSync } from "node:child_process";
import console from "node:console";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { positiveFlag, readArgs } from "../dist/bench/helpers/args.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const execFileAsync = promisify(execFile);

const USAGE = `Usage: npm run bench -- client-install [--tree LABEL=SOURCE]... [--installs 3] [--runs 10] [--work DIR]

What a worker installs, and how fast \`ha-module --version\` starts: each tree's client packed
as the tree packs it (npm run pack:client, or npm pack before it existed), installed into an
empty project with a plain npm install --installs times per tree, interleaved, then started
--runs times per way (npx, the installed bin, the single executable where the tree builds
one), interleaved. Prints per tree the tarball, the installed packages, files and bytes, the
install's median time and the start times' medians.

Options:
  --tree LABEL=SOURCE   SOURCE a directory of sources (. for this working tree) or a git ref;
                        without a tree for ., after=. is added
  --installs N          installs per tree (default 3)
  --runs N              starts per way (default 10)
  --work DIR            keep the trees, tarballs and projects there`;
const { values } = readArgs(USAGE, {
  tree: { type: "string", multiple: true, default: [] },
  installs: { type: "string", default: "3" },
  runs: { type: "string", default: "10" },
  work: { type: "string" },
});
const installs = positiveFlag("installs", values.installs);
const runs = positiveFlag("runs", values.runs);
const trees = values.tree.map((tree) => {
  const at = tree.indexOf("=");
  return at < 0 ? { label: tree, source: tree } : { label: tree.slice(0, at), source: tree.slice(at + 1) };
});
if (!trees.some((tree) => path.resolve(tree.source) === ROOT)) trees.push({ label: "after", source: "." });

const work = values.work === undefined ? mkdtempSync(path.join(os.tmpdir(), "ha-module-client-install-")) : path.resolve(values.work);
mkdirSync(work, { recursive: true });

/** npm as `npm run` started this script, or the one on PATH; no audit, fund or update notice (they only report, and ask the registry). */
function npm(args, cwd) {
  const npmCli = process.env.npm_execpath;
  const [command, prefix] = npmCli !== undefined && /npm-cli\.js$/.test(npmCli) ? [process.execPath, [npmCli]] : ["npm", []];
  return execFileAsync(command, [...prefix, ...args], {
    cwd,
    maxBuffer: 64 << 20,
    env: { ...process.env, npm_config_loglevel: "error", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" },
  });
}

function sourcesOf(tree) {
  if (existsSync(tree.source) && statSync(tree.source).isDirectory()) return path.resolve(tree.source);
  const dir = path.join(work, `${tree.label}-src`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync("sh", ["-c", `git -C "$0" archive "$1" | tar -x -C "$2"`, ROOT, tree.source, dir]);
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

/** The tree's tarball, packed as the tree says, and its executable when it builds one. */
async function buildTree(tree) {
  const sources = sourcesOf(tree);
  const out = path.join(work, `${tree.label}-pack`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  console.error(`${tree.label}: packing ${tree.source} …`);
  if (existsSync(path.join(sources, "scripts", "pack-client.mjs"))) {
    await execFileAsync(process.execPath, [path.join(sources, "scripts", "pack-client.mjs"), "--out-dir", out], { cwd: sources });
  } else {
    await npm(["pack", "--pack-destination", out], sources);
  }
  const tarball = path.join(out, readdirSync(out).find((name) => name.endsWith(".tgz")));
  let exe;
  if (existsSync(path.join(sources, "scripts", "build-exe.mjs"))) {
    exe = path.join(out, "ha-module");
    await execFileAsync(process.execPath, [path.join(sources, "scripts", "build-exe.mjs"), "--out", exe], { cwd: sources });
  }
  return { ...tree, tarball, exe };
}

function treeSize(dir) {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    files += 1;
    bytes += statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return { bytes, files };
}

/** A plain `npm install <tarball>` into a new empty project; its time and what it installed. */
async function install(built, index) {
  const project = path.join(work, `${built.label}-project-${index}`);
  rmSync(project, { recursive: true, force: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "worker", private: true, type: "module" }));
  const started = performance.now();
  await npm(["install", built.tarball], project);
  const seconds = (performance.now() - started) / 1000;
  const lock = JSON.parse(readFileSync(path.join(project, "package-lock.json"), "utf8"));
  return { project, seconds, packages: Object.keys(lock.packages).filter((key) => key !== "").length, ...treeSize(path.join(project, "node_modules")) };
}

async function wallMs(command, args, cwd) {
  const started = performance.now();
  const { stdout } = await execFileAsync(command, args, { cwd });
  if (!/^ha-module \d/.test(stdout)) throw new Error(`${command} ${args.join(" ")} printed ${JSON.stringify(stdout)}`);
  return performance.now() - started;
}

const median = (numbers) => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const built = [];
for (const tree of trees) built.push(await buildTree(tree));
const installed = new Map(built.map((tree) => [tree.label, []]));
for (let round = 0; round < installs; round++) {
  for (const tree of built) {
    console.error(`${tree.label}: install ${round + 1}/${installs} …`);
    installed.get(tree.label).push(await install(tree, round));
  }
}

const ways = built.flatMap((tree) => {
  const project = installed.get(tree.label).at(-1).project;
  const npmCli = process.env.npm_execpath;
  const npx = npmCli !== undefined && /npm-cli\.js$/.test(npmCli) ? [process.execPath, [npmCli, "exec", "--", "ha-module", "--version"]] : ["npm", ["exec", "--", "ha-module", "--version"]];
  return [
    { tree: tree.label, way: "npx ha-module --version", command: npx[0], args: npx[1], cwd: project },
    { tree: tree.label, way: "node_modules/.bin/ha-module --version", command: path.join(project, "node_modules", ".bin", "ha-module"), args: ["--version"], cwd: project },
    ...(tree.exe === undefined ? [] : [{ tree: tree.label, way: "executable --version", command: tree.exe, args: ["--version"], cwd: work }]),
  ];
});
const times = new Map(ways.map((way) => [way, []]));
for (let run = 0; run < runs; run++) for (const way of ways) times.get(way).push(await wallMs(way.command, way.args, way.cwd));

const MB = (bytes) => `${(bytes / 1e6).toFixed(bytes < 1e6 ? 2 : 1)} MB`;
console.log(`client install, ${installs} installs and ${runs} starts per way, interleaved (${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}, Node ${process.version})`);
for (const tree of built) {
  const rounds = installed.get(tree.label);
  const last = rounds.at(-1);
  console.log(
    `${tree.label} (${tree.source}): tarball ${MB(statSync(tree.tarball).size)}; installed ${last.packages} package${last.packages === 1 ? "" : "s"}, ` +
      `${last.files} files, ${MB(last.bytes)} in node_modules; install median ${median(rounds.map((round) => round.seconds)).toFixed(1)} s` +
      (tree.exe === undefined ? "" : `; executable ${MB(statSync(tree.exe).size)}`),
  );
}
for (const way of ways) console.log(`  ${way.tree}: ${way.way}: median ${median(times.get(way)).toFixed(0)} ms (min ${Math.min(...times.get(way)).toFixed(0)}, max ${Math.max(...times.get(way)).toFixed(0)})`);
if (values.work === undefined) rmSync(work, { recursive: true, force: true });
