#!/usr/bin/env node
/**
 * Packs the client, what a worker or a head node installs (`npm run pack:client`):
 *
 *   package.json                 written here: the SDK as the main entry and as
 *                                `ha-module/sdk`, the `ha-module` bin, no dependency, no script
 *   README.md                    the repository's
 *   bin/ha-module.js             the repository's bin, unchanged
 *   dist/shared/cli/main.js      the command line without `serve`, one ES module
 *                                (shared/cli/client-main.ts, scripts/client-bundles.mjs)
 *   dist/shared/sdk/index.js     the SDK, one ES module
 *   dist/shared/sdk/index.d.ts   its declarations rolled up into one file by API Extractor
 *                                (scripts/api-report.mjs), doc comments included
 *
 * into `<out-dir>/ha-module-<version>.tgz` with `npm pack`. The repository's own
 * package.json is the service's (its dependencies are the functions app's and the local
 * host's) and is never what a worker installs.
 *
 * Usage: node scripts/pack-client.mjs [--out-dir <dir>]   (default: dist/)
 */
import { execFile } from "node:child_process";
import console from "node:console";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { extractApi } from "./api-report.mjs";
import { bundleCli, bundleSdk } from "./client-bundles.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const execFileAsync = promisify(execFile);

const SDK = "./dist/shared/sdk/index.js";
const SDK_TYPES = "./dist/shared/sdk/index.d.ts";

/** The client's manifest: the repository's name, version and description, none of its dependencies or scripts. */
function clientManifest() {
  const repo = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const entry = { types: SDK_TYPES, default: SDK };
  return {
    name: repo.name,
    version: repo.version,
    description: repo.description,
    license: repo.license,
    type: "module",
    engines: repo.engines,
    main: SDK,
    types: SDK_TYPES,
    exports: { ".": entry, "./sdk": entry, "./package.json": "./package.json" },
    bin: repo.bin,
  };
}

/** npm as `npm run` started this script, or the one on PATH. */
function npm(args, cwd) {
  const npmCli = process.env.npm_execpath;
  const [command, prefix] = npmCli !== undefined && /npm-cli\.js$/.test(npmCli) ? [process.execPath, [npmCli]] : ["npm", []];
  return execFileAsync(command, [...prefix, ...args], { cwd, env: { ...process.env, npm_config_loglevel: "error" } });
}

/** Builds and packs the client into `outDir`; resolves with the tarball's path and what npm says of it. */
export async function packClient(outDir) {
  const stage = mkdtempSync(path.join(os.tmpdir(), "ha-module-client-"));
  try {
    await Promise.all([bundleCli(path.join(stage, "dist/shared/cli/main.js")), bundleSdk(path.join(stage, SDK))]);
    // The report is npm test's business (npm run api:check); here only the declarations are wanted.
    await extractApi({ rollup: path.join(stage, SDK_TYPES) });
    if (!existsSync(path.join(stage, SDK_TYPES))) throw new Error("API Extractor wrote no declarations: run npm run api:check to see why");
    mkdirSync(path.join(stage, "bin"));
    copyFileSync(path.join(ROOT, "bin", "ha-module.js"), path.join(stage, "bin", "ha-module.js"));
    copyFileSync(path.join(ROOT, "README.md"), path.join(stage, "README.md"));
    writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(clientManifest(), null, 2)}\n`);
    mkdirSync(outDir, { recursive: true });
    const { stdout } = await npm(["pack", "--json", "--pack-destination", outDir], stage);
    const [packed] = JSON.parse(stdout);
    return { tarball: path.join(outDir, packed.filename), packed };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

async function main() {
  const { values } = parseArgs({ options: { "out-dir": { type: "string", default: path.join(ROOT, "dist") } } });
  const started = performance.now();
  const { tarball, packed } = await packClient(path.resolve(values["out-dir"]));
  const kB = (bytes) => `${(bytes / 1000).toFixed(0)} kB`;
  console.log(
    `${path.relative(process.cwd(), tarball) || tarball}: ${packed.entryCount} files, ${kB(packed.size)} packed, ${kB(packed.unpackedSize)} installed ` +
      `(${((performance.now() - started) / 1000).toFixed(1)} s). Install it with: npm install ${tarball}`,
  );
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`pack:client: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
