#!/usr/bin/env node
/**
 * Builds the deployable zip for Azure Functions Flex Consumption (`npm run package`):
 *
 *   host.json, package.json        at the root, as the Functions host expects
 *   dist/functions, dist/shared    compiled JavaScript from a clean TypeScript build, and the
 *                                  dashboard's files (dist/functions/dashboard/), without
 *                                  what Azure never runs: the CLI (dist/shared/cli), the local
 *                                  host and its embedded stores (dist/shared/host, with the
 *                                  emulator's certificate code) and the type declarations
 *   node_modules                   production dependencies only, `npm ci --omit=dev` from the
 *                                  lockfile (the Azure packages are optionalDependencies,
 *                                  which npm installs unless told --omit=optional)
 *
 * The archive is reproducible: entries in byte order of their paths, one fixed timestamp,
 * modes normalised, no directory entries, no symlinks. The same commit, Node and npm give
 * the same bytes.
 *
 * Usage: node scripts/package.mjs [--out <zip path>] [--stage <dir>]
 * Default output: dist/ha-module.zip (dist/ and *.zip are gitignored). The build stages in
 * a temporary directory that is removed afterwards; with --stage it stages in <dir> and
 * keeps it, and when <dir> already holds a staged build it only zips that again.
 */
import { spawnSync } from "node:child_process";
import console from "node:console";
import { createWriteStream } from "node:fs";
import { copyFile, lstat, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import yazl from "yazl";
import { copyDashboardAssets } from "./dashboard-assets.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

/** Local-time components, so the DOS timestamp fields read the same in every time zone. */
const FIXED_MTIME = new Date(2000, 0, 1, 0, 0, 0);
const FILE_MODE = 0o100644;
const EXECUTABLE_MODE = 0o100755;

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: "inherit", shell: false });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${path.basename(command)} ${args.join(" ")} exited with ${result.status}`);
}

/** npm as the running `npm run` invoked it, or the one on PATH. */
function npm(args, cwd) {
  const npmCli = process.env.npm_execpath;
  if (npmCli && /npm-cli\.js$/.test(npmCli)) run(process.execPath, [npmCli, ...args], cwd);
  else run(process.platform === "win32" ? "npm.cmd" : "npm", args, cwd);
}

/**
 * Compiles into the staging directory with a fresh build-info file, so a stale dist/ (or an
 * incremental build that skipped emitting) can never leak into the package.
 */
function compile(stage) {
  const tsc = require.resolve("typescript/bin/tsc");
  run(process.execPath, [
    tsc,
    "-p", path.join(ROOT, "tsconfig.build.json"),
    "--outDir", path.join(stage, "dist"),
    "--tsBuildInfoFile", path.join(stage, "tsbuildinfo"),
  ], ROOT);
}

/** The dashboard's HTML, CSS, icon and browser script, which tsc does not emit. */
const DASHBOARD_FILE = /^dist\/functions\/dashboard\/[^/]+\.(html|css|js|svg)$/;

/** Production dependencies exactly as the lockfile pins them; install scripts are not run. */
async function installProductionDependencies(stage) {
  await copyFile(path.join(ROOT, "package.json"), path.join(stage, "package.json"));
  await copyFile(path.join(ROOT, "package-lock.json"), path.join(stage, "package-lock.json"));
  npm(["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], stage);
}

/** Files under `dir` as zip paths relative to `base`; symlinks and .bin shims are left out. */
async function listFiles(base, dir) {
  const files = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink() || entry.name === ".bin" || entry.name === ".package-lock.json") continue;
    if (entry.isDirectory()) files.push(...(await listFiles(base, full)));
    else if (entry.isFile()) files.push(path.relative(base, full).split(path.sep).join("/"));
  }
  return files;
}

/** Only what the Functions host loads: compiled JavaScript (and its source maps) of the app, and the dashboard it serves. */
function runsInAzure(file) {
  if (DASHBOARD_FILE.test(file)) return true;
  if (!/\.js(\.map)?$/.test(file)) return false;
  if (file.startsWith("dist/shared/cli/") || file.startsWith("dist/shared/host/")) return false;
  return file.startsWith("dist/functions/") || file.startsWith("dist/shared/");
}

async function exists(file) {
  return stat(file).then(() => true, () => false);
}

async function writeZip(entries, outFile) {
  const zip = new yazl.ZipFile();
  for (const { zipPath, realPath } of entries) {
    const { mode } = await lstat(realPath);
    zip.addFile(realPath, zipPath, {
      mtime: FIXED_MTIME,
      mode: mode & 0o111 ? EXECUTABLE_MODE : FILE_MODE,
      compress: true,
      compressionLevel: 6,
      forceDosTimestamp: true,
    });
  }
  zip.end();
  await mkdir(path.dirname(outFile), { recursive: true });
  await pipeline(zip.outputStream, createWriteStream(outFile));
}

async function main() {
  const { values } = parseArgs({
    options: {
      out: { type: "string", default: path.join(ROOT, "dist", "ha-module.zip") },
      stage: { type: "string" },
    },
  });
  const outFile = path.resolve(values.out);
  const started = performance.now();
  const stage = values.stage === undefined
    ? await mkdtemp(path.join(os.tmpdir(), "ha-module-package-"))
    : path.resolve(values.stage);
  try {
    await mkdir(stage, { recursive: true });
    // Written last, so a build that failed half-way is never mistaken for a staged one.
    const marker = path.join(stage, "staged.ok");
    const staged = await exists(marker);
    if (!staged) {
      compile(stage);
      await copyDashboardAssets(path.join(stage, "dist"));
      await installProductionDependencies(stage);
      await writeFile(marker, "");
    }
    const stagedAt = performance.now();

    const entries = [
      { zipPath: "host.json", realPath: path.join(ROOT, "host.json") },
      { zipPath: "package.json", realPath: path.join(ROOT, "package.json") },
      ...(await listFiles(stage, path.join(stage, "dist")))
        .filter(runsInAzure)
        .map((file) => ({ zipPath: file, realPath: path.join(stage, file) })),
      ...(await listFiles(stage, path.join(stage, "node_modules"))).map((file) => ({
        zipPath: file,
        realPath: path.join(stage, file),
      })),
    ];
    // Byte order, not locale order: the same on every machine.
    entries.sort((a, b) => (a.zipPath < b.zipPath ? -1 : a.zipPath > b.zipPath ? 1 : 0));
    await writeZip(entries, outFile);

    const { size } = await stat(outFile);
    const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      `${path.relative(process.cwd(), outFile) || outFile}: ${entries.length} files, ${(size / 1024 / 1024).toFixed(1)} MiB ` +
        `(${staged ? "reused staged build" : `compile and npm ci ${seconds(stagedAt - started)}`}, ` +
        `zip ${seconds(performance.now() - stagedAt)})`,
    );
  } finally {
    if (values.stage === undefined) await rm(stage, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`package: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
