/**
 * `npm run package` builds the zip Flex Consumption deploys: the functions app bundled into
 * one module (scripts/bundle-functions.mjs). These tests build it, zip the same staged build
 * again in another time zone (the bytes must match), then check its layout, its size, what
 * went into the bundle, and that the entry point loads from the unpacked zip alone with the
 * Bicep's settings. (The registration path is in azure-registration.test.ts.)
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isBuiltin } from "node:module";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BICEP_TABLE_SETTINGS } from "../helpers/bicep-settings.js";
import { dosTimestamp, readEntries, readEntryData, type ZipEntry } from "./zip-reader.js";

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const BUILD_TIMEOUT_MS = 240_000;

interface PackageJson {
  main: string;
  type?: string;
  dependencies?: Record<string, string>;
  optionalDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/** What esbuild says went into the bundle (the stage's bundle-meta.json). */
interface BundleMeta {
  inputs: Record<string, unknown>;
  outputs: Record<string, { imports: Array<{ path: string; external?: boolean }> }>;
}

/** The deploy package's budget: Flex Consumption pulls and loads it on every cold start. */
const MAX_ZIP_BYTES = 10 * 1024 * 1024;
const MAX_ZIP_FILES = 300;
const repoPackage = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as PackageJson;

let workDir: string;
let zip: Buffer;
let entries: ZipEntry[];
let names: Set<string>;
let bundleMeta: BundleMeta;
let buildSeconds: number;
let rezipSeconds: number;
const hashes: string[] = [];

async function buildPackage(outFile: string, stage: string, timeZone: string): Promise<void> {
  await execFileAsync(process.execPath, [path.join(ROOT, "scripts", "package.mjs"), "--out", outFile, "--stage", stage], {
    cwd: ROOT,
    env: { ...process.env, TZ: timeZone },
    timeout: BUILD_TIMEOUT_MS,
  });
}

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), "ha-module-package-test-"));
  const stage = path.join(workDir, "stage");
  const first = path.join(workDir, "a", "ha-module.zip");
  const second = path.join(workDir, "b", "ha-module.zip");
  let started = performance.now();
  await buildPackage(first, stage, "Pacific/Auckland");
  buildSeconds = (performance.now() - started) / 1000;
  // npm ci runs once: the lockfile's integrity hashes already pin node_modules' content.
  // The second run zips the same staged build again, in another time zone.
  started = performance.now();
  await buildPackage(second, stage, "America/Los_Angeles");
  rezipSeconds = (performance.now() - started) / 1000;
  for (const file of [first, second]) hashes.push(createHash("sha256").update(readFileSync(file)).digest("hex"));
  zip = readFileSync(first);
  entries = readEntries(zip);
  names = new Set(entries.map((entry) => entry.name));
  bundleMeta = JSON.parse(readFileSync(path.join(stage, "bundle-meta.json"), "utf8")) as BundleMeta;
}, 2 * BUILD_TIMEOUT_MS);

afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe("npm run package", () => {
  it("is reproducible: zipping in two time zones gives the same bytes", () => {
    console.log(
      `package: build ${buildSeconds.toFixed(1)} s, re-zip ${rezipSeconds.toFixed(1)} s; ` +
        `zip ${(zip.length / 1024 / 1024).toFixed(1)} MiB, ${entries.length} entries`,
    );
    expect(hashes[0]).toBe(hashes[1]);
  });

  it(`stays within its budget: at most ${MAX_ZIP_BYTES / 1024 / 1024} MiB and ${MAX_ZIP_FILES} files`, () => {
    expect(zip.length).toBeLessThanOrEqual(MAX_ZIP_BYTES);
    expect(entries.length).toBeLessThanOrEqual(MAX_ZIP_FILES);
  });

  it("puts host.json and package.json at the root, and package.json's main names the bundle, with nothing to install", () => {
    expect(names).toContain("host.json");
    expect(names).toContain("package.json");
    const zippedPackage = JSON.parse(readEntryData(zip, entry("package.json")).toString("utf8")) as PackageJson;
    expect(zippedPackage.main).toBe("dist/functions/index.mjs");
    expect(zippedPackage.type).toBe("module");
    expect(names).toContain(zippedPackage.main);
    expect(zippedPackage.dependencies).toBeUndefined();
    expect(zippedPackage.optionalDependencies).toBeUndefined();
    expect(readEntryData(zip, entry("host.json")).toString("utf8")).toBe(readFileSync(path.join(ROOT, "host.json"), "utf8"));
  });

  it("holds only the bundle (its entry and its chunks) and the dashboard's files: no node_modules", () => {
    const allowed = /^(host\.json|package\.json|dist\/functions\/index\.mjs|dist\/functions\/chunks\/[^/]+\.mjs|dist\/functions\/dashboard\/[^/]+\.(html|css|js|svg))$/;
    expect(entries.map((found) => found.name).filter((name) => !allowed.test(name))).toEqual([]);
  });

  it("bundles the app's sources and production dependencies only: no CLI, local host, test, bench or dev code", () => {
    const inputs = Object.keys(bundleMeta.inputs);
    expect(inputs).toContain("functions/index.ts");
    expect(inputs).toContain("shared/http/register-functions.ts");
    expect(inputs.filter((input) => /^(shared\/cli|shared\/host|test|bench|examples|scripts)\//.test(input))).toEqual([]);
    // Dev-only as the lockfile says (a devDependency a production package also needs is "devOptional").
    const lock = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.keys(repoPackage.devDependencies).filter((name) => lock.packages[`node_modules/${name}`]?.dev === true);
    expect(devOnly).toEqual(expect.arrayContaining(["vitest", "azurite", "typescript", "esbuild"]));
    expect(inputs.filter((input) => devOnly.some((name) => input.includes(`node_modules/${name}/`)))).toEqual([]);
    // Every Azure package the app uses is inside.
    for (const dependency of ["@azure/functions", "@azure/data-tables", "@azure/cosmos", "@azure/identity", "@azure/monitor-opentelemetry", "@azure/functions-opentelemetry-instrumentation"]) {
      expect(inputs.some((input) => input.includes(`node_modules/${dependency}/`)), dependency).toBe(true);
    }
  });

  it("bundles one copy of each package version, however often npm nested it", () => {
    const copies = new Map<string, Set<string>>();
    for (const input of Object.keys(bundleMeta.inputs)) {
      const found = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
      if (found === null) continue;
      const version = (JSON.parse(readFileSync(path.join(ROOT, found[1]!, "package.json"), "utf8")) as { version: string }).version;
      const key = `${found[2]}@${version}`;
      copies.set(key, (copies.get(key) ?? new Set()).add(found[1]!));
    }
    expect([...copies].filter(([, roots]) => roots.size > 1).map(([key]) => key)).toEqual([]);
  });

  it("keeps the Cosmos DB SDK, pg and the telemetry set-up out of the entry module: chunks loaded only when used", () => {
    const entryInputs = Object.entries(bundleMeta.outputs).find(([file]) => file.endsWith("dist/functions/index.mjs"))?.[1] as unknown as { inputs: Record<string, unknown> };
    const inEntry = Object.keys(entryInputs.inputs);
    expect(inEntry.filter((input) => /node_modules\/(@azure\/cosmos|@azure\/monitor-opentelemetry|pg|pg-pool|pg-protocol)\//.test(input))).toEqual([]);
    expect(inEntry.some((input) => input.includes("node_modules/@azure/data-tables/"))).toBe(true);
  });

  it("leaves outside the bundle only Node's own modules, the worker's @azure/functions-core, and pg's optional libpq binding", () => {
    const external = new Set(Object.values(bundleMeta.outputs).flatMap((output) => output.imports.filter((found) => found.external === true).map((found) => found.path)));
    // pg-native is required only through pg.native, which the app never touches.
    expect([...external].filter((name) => !isBuiltin(name)).sort()).toEqual(["@azure/functions-core", "pg-native"]);
  });

  it("writes entries in byte order with one fixed timestamp and normalised modes", () => {
    const order = entries.map((found) => found.name);
    expect(order).toEqual([...order].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(entries.map(dosTimestamp))).toEqual(new Set(["2000-01-01 00:00:00"]));
    expect(entries.filter((found) => found.extraFieldLength !== 0).map((found) => found.name)).toEqual([]);
    expect(entries.filter((found) => found.unixMode !== 0o100644 && found.unixMode !== 0o100755).map((found) => found.name)).toEqual([]);
  });

  it("loads the entry point package.json names from the unpacked zip alone under plain Node, with the Bicep's settings (telemetry on) and without telemetry", async () => {
    const appDir = unpacked();
    const main = (JSON.parse(readEntryData(zip, entry("package.json")).toString("utf8")) as PackageJson).main;
    // vitest's module interop hides what Node's ESM loader does with the CommonJS packages inside: run the bundle itself.
    const script = `await import(${JSON.stringify(`./${main}`)}); console.log("entry point loaded", (await import("@opentelemetry/api").catch(() => undefined)) === undefined); process.exit(0);`;
    for (const env of [BICEP_TABLE_SETTINGS, { HA_TABLE_ENDPOINT: BICEP_TABLE_SETTINGS["HA_TABLE_ENDPOINT"]! }]) {
      const { stdout, stderr } = await execFileAsync(process.execPath, ["--input-type=module", "-e", script], {
        cwd: appDir,
        // Only what the deployed app gets: no NODE_PATH, no repository node_modules above it.
        env: { PATH: process.env.PATH ?? "", ...env },
        timeout: 60_000,
      });
      // Loaded, and no package is reachable beside it: the bundle needs none.
      expect(stdout).toContain("entry point loaded true");
      expect(stderr).not.toMatch(/ha-module:/);
    }
  });

  it("ships the dashboard's own files (no CDN), byte for byte, beside the bundle that reads them", () => {
    const files = readdirSync(path.join(ROOT, "functions", "dashboard")).sort();
    expect(files).toEqual(["app.css", "app.js", "favicon.svg", "index.html"]);
    for (const file of files) {
      const zipped = readEntryData(zip, entry(`dist/functions/dashboard/${file}`));
      expect(zipped.equals(readFileSync(path.join(ROOT, "functions", "dashboard", file))), file).toBe(true);
      // Self-contained: nothing is loaded from another origin.
      expect(zipped.toString("utf8"), file).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\/|@import\s+url\(\s*["']?https?:|https:\/\/cdn/i);
    }
  });
});

let unpackedDir: string | undefined;

/** The zip unpacked once into the work directory, as Azure unpacks it. */
function unpacked(): string {
  if (unpackedDir !== undefined) return unpackedDir;
  const appDir = path.join(workDir, "unpacked");
  for (const found of entries) {
    const target = path.join(appDir, ...found.name.split("/"));
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, readEntryData(zip, found));
  }
  unpackedDir = appDir;
  return appDir;
}

function entry(name: string): ZipEntry {
  const found = entries.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`${name} is not in the zip`);
  return found;
}
