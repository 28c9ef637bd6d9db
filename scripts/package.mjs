#!/usr/bin/env node
/**
 * Builds the deployable zip for Azure Functions Flex Consumption (`npm run package`):
 *
 *   host.json                      at the root, as the Functions host expects
 *   package.json                   the app's manifest: "main" names the bundle, no dependencies
 *   dist/functions/index.mjs       the functions app as one tree-shaken ES module, every
 *                                  dependency inside (scripts/bundle-functions.mjs); no test,
 *                                  bench, CLI, local host or dev code, and no node_modules:
 *                                  the one module left outside, @azure/functions-core, is
 *                                  the Node.js worker's own
 *   dist/functions/dashboard/      the dashboard's files, which the bundle reads beside it
 *
 * Flex Consumption pulls and loads this on every cold start, so it is kept small: a few
 * files, a few MiB (docs/deploy.md has the figures, docs/benchmarks.md the start-up time).
 *
 * The archive is reproducible: entries in byte order of their paths, one fixed timestamp,
 * modes normalised, no directory entries, no symlinks. The same commit, Node and npm give
 * the same bytes.
 *
 * The staged directory also holds bundle-meta.json (esbuild's metafile: what went into the
 * bundle), which is not zipped.
 *
 * Usage: node scripts/package.mjs [--out <zip path>] [--stage <dir>]
 * Default output: dist/ha-module.zip (dist/ and *.zip are gitignored). The build stages in
 * a temporary directory that is removed afterwards; with --stage it stages in <dir> and
 * keeps it (unpacked, it is the app as Azure runs it), and when <dir> already holds a
 * staged build it only zips that again.
 */
import console from "node:console";
import { createWriteStream, readFileSync } from "node:fs";
import { copyFile, lstat, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import yazl from "yazl";
import { BUNDLE_ENTRY, bundleFunctions } from "./bundle-functions.mjs";
import { copyDashboardAssets } from "./dashboard-assets.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Local-time components, so the DOS timestamp fields read the same in every time zone. */
const FIXED_MTIME = new Date(2000, 0, 1, 0, 0, 0);
const FILE_MODE = 0o100644;
const EXECUTABLE_MODE = 0o100755;

/**
 * The zip's package.json: the repository's name and version, ES modules, and "main" naming
 * the bundle. No dependencies: everything the app runs is inside the bundle.
 */
function appManifest() {
  const repo = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const manifest = { name: repo.name, version: repo.version, description: repo.description, private: true, license: repo.license, type: "module", engines: repo.engines, main: BUNDLE_ENTRY };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** Files under `dir` as zip paths relative to `base`; symlinks are left out. */
async function listFiles(base, dir) {
  const files = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) files.push(...(await listFiles(base, full)));
    else if (entry.isFile()) files.push(path.relative(base, full).split(path.sep).join("/"));
  }
  return files;
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
      await rm(path.join(stage, "dist"), { recursive: true, force: true });
      const metafile = await bundleFunctions(stage);
      // Beside the app, not in the zip: what went into the bundle, for the package's tests.
      await writeFile(path.join(stage, "bundle-meta.json"), JSON.stringify(metafile));
      await copyDashboardAssets(path.join(stage, "dist"));
      await copyFile(path.join(ROOT, "host.json"), path.join(stage, "host.json"));
      await writeFile(path.join(stage, "package.json"), appManifest());
      await writeFile(marker, "");
    }
    const stagedAt = performance.now();

    const entries = ["host.json", "package.json", ...(await listFiles(stage, path.join(stage, "dist")))].map((file) => ({
      zipPath: file,
      realPath: path.join(stage, file),
    }));
    // Byte order, not locale order: the same on every machine.
    entries.sort((a, b) => (a.zipPath < b.zipPath ? -1 : a.zipPath > b.zipPath ? 1 : 0));
    await writeZip(entries, outFile);

    const { size } = await stat(outFile);
    const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      `${path.relative(process.cwd(), outFile) || outFile}: ${entries.length} files, ${(size / 1024 / 1024).toFixed(1)} MiB ` +
        `(${staged ? "reused staged build" : `bundle ${seconds(stagedAt - started)}`}, ` +
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
