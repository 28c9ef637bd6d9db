/**
 * `npm run package` builds the zip Flex Consumption deploys. These tests build it, zip the
 * same staged build again in another time zone (the bytes must match), then check its
 * layout and that the functions entry point loads from the unpacked zip alone.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dosTimestamp, readEntries, readEntryData, type ZipEntry } from "./zip-reader.js";

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const BUILD_TIMEOUT_MS = 240_000;

interface PackageJson {
  main: string;
  optionalDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}
const repoPackage = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as PackageJson;

let workDir: string;
let zip: Buffer;
let entries: ZipEntry[];
let names: Set<string>;
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
}, 2 * BUILD_TIMEOUT_MS);

// Two node_modules trees (the stage and the unpacked zip, with the Azure Monitor distro): on a
// loaded machine removing them takes longer than the default hook timeout.
afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
}, 180_000);

describe("npm run package", () => {
  it("is reproducible: zipping in two time zones gives the same bytes", () => {
    console.log(
      `package: build ${buildSeconds.toFixed(1)} s, re-zip ${rezipSeconds.toFixed(1)} s; ` +
        `zip ${(zip.length / 1024 / 1024).toFixed(1)} MiB, ${entries.length} entries`,
    );
    expect(hashes[0]).toBe(hashes[1]);
  });

  it("puts host.json and package.json at the root, and the entry point package.json names", () => {
    expect(names).toContain("host.json");
    expect(names).toContain("package.json");
    const zippedPackage = JSON.parse(readEntryData(zip, entry("package.json")).toString("utf8")) as PackageJson;
    expect(zippedPackage.main).toBe("dist/functions/index.js");
    expect(names).toContain(zippedPackage.main);
    expect(readEntryData(zip, entry("host.json")).toString("utf8")).toBe(readFileSync(path.join(ROOT, "host.json"), "utf8"));
  });

  it("holds only the compiled app and its production dependencies", () => {
    const allowed = /^(host\.json|package\.json|dist\/functions\/.+\.js(\.map)?|dist\/functions\/dashboard\/[^/]+\.(html|css|svg)|dist\/shared\/.+\.js(\.map)?|node_modules\/.+)$/;
    expect(entries.map((found) => found.name).filter((name) => !allowed.test(name))).toEqual([]);
  });

  it("leaves out what Azure never runs: the CLI, the local host, the emulator certificate code and type declarations", () => {
    const shipped = [...names];
    expect(shipped.filter((name) => name.startsWith("dist/shared/cli/") || name.startsWith("dist/shared/host/"))).toEqual([]);
    expect(shipped.filter((name) => /certificate|azurite|embedded/i.test(name) && name.startsWith("dist/"))).toEqual([]);
    expect(shipped.filter((name) => name.startsWith("dist/") && name.endsWith(".d.ts"))).toEqual([]);
    // …while what the functions need is there.
    expect(names).toContain("dist/shared/http/register-functions.js");
    expect(names).toContain("dist/shared/store/create-store.js");
  });

  it("includes every production dependency (the Azure packages, optional for SDK-only installs)", () => {
    for (const dependency of Object.keys(repoPackage.optionalDependencies)) {
      expect(names, dependency).toContain(`node_modules/${dependency}/package.json`);
    }
    expect([...names].some((name) => name.startsWith("node_modules/@azure/functions/"))).toBe(true);
  });

  it("leaves out every devDependency", () => {
    // Dev-only as the lockfile says: a devDependency that a production package also needs
    // (@types/node, through the Azure Monitor distro's instrumentations) is "devOptional" and ships.
    const lock = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.keys(repoPackage.devDependencies).filter((name) => lock.packages[`node_modules/${name}`]?.dev === true);
    expect(devOnly).toEqual(expect.arrayContaining(["vitest", "azurite", "typescript"]));
    const leaked = devOnly.filter((dependency) => [...names].some((name) => name.startsWith(`node_modules/${dependency}/`)));
    expect(leaked).toEqual([]);
  });

  it("writes entries in byte order with one fixed timestamp and normalised modes", () => {
    const order = entries.map((found) => found.name);
    expect(order).toEqual([...order].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(entries.map(dosTimestamp))).toEqual(new Set(["2000-01-01 00:00:00"]));
    expect(entries.filter((found) => found.extraFieldLength !== 0).map((found) => found.name)).toEqual([]);
    expect(entries.filter((found) => found.unixMode !== 0o100644 && found.unixMode !== 0o100755).map((found) => found.name)).toEqual([]);
  });

  it("loads the functions entry point from the unpacked zip alone, with identity settings", async () => {
    const appDir = unpacked();
    const { stdout } = await execFileAsync(
      process.execPath,
      ["--input-type=module", "-e", "await import('./dist/functions/index.js'); console.log('entry point loaded');"],
      {
        cwd: appDir,
        // Only what the deployed app gets: no NODE_PATH, no repository node_modules above it.
        env: { PATH: process.env.PATH ?? "", HA_TABLE_ENDPOINT: "https://acct.table.core.windows.net" },
        timeout: 60_000,
      },
    );
    expect(stdout).toContain("entry point loaded");
    // With the telemetry settings Bicep gives, the Azure Monitor set-up loads from the zip too.
    const withTelemetry = await execFileAsync(
      process.execPath,
      ["--input-type=module", "-e", "await import('./dist/functions/index.js'); console.log('entry point loaded with telemetry'); process.exit(0);"],
      {
        cwd: appDir,
        env: {
          PATH: process.env.PATH ?? "",
          HA_TABLE_ENDPOINT: "https://acct.table.core.windows.net",
          APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/",
          APPLICATIONINSIGHTS_AUTHENTICATION_STRING: "ClientId=11111111-1111-1111-1111-111111111111;Authorization=AAD",
        },
        timeout: 60_000,
      },
    );
    expect(withTelemetry.stdout).toContain("entry point loaded with telemetry");
  });

  it("ships the dashboard's own files (no CDN), byte for byte, where the handler reads them in the unpacked zip", async () => {
    const files = readdirSync(path.join(ROOT, "functions", "dashboard")).sort();
    expect(files).toEqual(["app.css", "app.js", "favicon.svg", "index.html"]);
    for (const file of files) {
      const zipped = readEntryData(zip, entry(`dist/functions/dashboard/${file}`));
      expect(zipped.equals(readFileSync(path.join(ROOT, "functions", "dashboard", file))), file).toBe(true);
      // Self-contained: nothing is loaded from another origin.
      expect(zipped.toString("utf8"), file).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\/|@import\s+url\(\s*["']?https?:|https:\/\/cdn/i);
    }
    const { stdout } = await execFileAsync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        "const a = await import('./dist/functions/dashboard-assets.js'); for (const n of ['index.html', 'app.js', 'app.css', 'favicon.svg']) console.log(n, (await a.readDashboardFile(n)).length);",
      ],
      { cwd: unpacked(), env: { PATH: process.env.PATH ?? "" }, timeout: 60_000 },
    );
    for (const file of files) expect(stdout).toContain(`${file} ${readFileSync(path.join(ROOT, "functions", "dashboard", file), "utf8").length}`);
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
