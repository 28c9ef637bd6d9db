#!/usr/bin/env node
/**
 * Builds `ha-module` as one executable file for Linux x64 (`npm run build:exe`), with Node's
 * single executable applications: the command line without `serve`
 * (shared/cli/client-main.ts) bundled into one CommonJS script
 * (scripts/client-bundles.mjs), turned into a preparation blob by
 * `node --experimental-sea-config` (with V8's code cache, so it starts without compiling),
 * and injected with postject into a copy of the Node that runs this script. The file needs
 * no Node.js, no npm and no node_modules where it runs (docs/cli.md, "One executable file").
 *
 * The copy of Node (about 100 MB) and the blob are made in a temporary directory, removed
 * afterwards; only the executable is written to --out.
 *
 * Usage: node scripts/build-exe.mjs [--out <file>]   (default: dist/ha-module)
 */
import { execFile } from "node:child_process";
import console from "node:console";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { bundleCli } from "./client-bundles.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const execFileAsync = promisify(execFile);
const POSTJECT = createRequire(import.meta.url).resolve("postject/dist/cli.js");
/** The fuse Node's binary carries, which postject flips to say a blob is injected. */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** Runs a step, and on failure throws with everything it printed (postject prints LIEF's harmless warnings on success too). */
async function step(what, command, args) {
  try {
    await execFileAsync(command, args, { maxBuffer: 16 << 20 });
  } catch (error) {
    throw new Error(`${what} failed: ${error.message}\n${error.stdout ?? ""}${error.stderr ?? ""}`, { cause: error });
  }
}

/** Writes the executable to `outFile`; resolves with its size in bytes. */
export async function buildExecutable(outFile) {
  if (process.platform !== "linux" || process.arch !== "x64") throw new Error(`the executable is built for Linux x64, from a Node of that platform; this one is ${process.platform} ${process.arch}`);
  const work = mkdtempSync(path.join(os.tmpdir(), "ha-module-exe-"));
  try {
    const script = path.join(work, "ha-module.cjs");
    await bundleCli(script, "cjs");
    const blob = path.join(work, "sea-prep.blob");
    const config = path.join(work, "sea-config.json");
    writeFileSync(config, JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }));
    await step("node --experimental-sea-config", process.execPath, ["--experimental-sea-config", config]);
    const exe = path.join(work, "ha-module");
    copyFileSync(process.execPath, exe);
    chmodSync(exe, 0o755);
    await step("postject", process.execPath, [POSTJECT, exe, "NODE_SEA_BLOB", blob, "--sentinel-fuse", SEA_FUSE]);
    mkdirSync(path.dirname(outFile), { recursive: true });
    // Within one file system a rename; across them (tmpfs) a copy.
    try {
      renameSync(exe, outFile);
    } catch {
      copyFileSync(exe, outFile);
      chmodSync(outFile, 0o755);
    }
    return statSync(outFile).size;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function main() {
  const { values } = parseArgs({ options: { out: { type: "string", default: path.join(ROOT, "dist", "ha-module") } } });
  const outFile = path.resolve(values.out);
  const started = performance.now();
  const size = await buildExecutable(outFile);
  console.log(`${path.relative(process.cwd(), outFile) || outFile}: ${(size / 1024 / 1024).toFixed(1)} MiB, Linux x64, Node ${process.version} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`build:exe: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
