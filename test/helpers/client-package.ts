import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const STEP_TIMEOUT_MS = 120_000;

/**
 * npm as `npm run` invoked it (vitest under npm test), or the one on PATH. No audit, fund
 * or update notice: they only report, and would ask the registry.
 */
export function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  const npmCli = process.env["npm_execpath"];
  const [command, prefix] = npmCli !== undefined && /npm-cli\.js$/.test(npmCli) ? [process.execPath, [npmCli]] : ["npm", []];
  return execFileAsync(command, [...prefix, ...args], {
    cwd,
    timeout: STEP_TIMEOUT_MS,
    env: { ...process.env, npm_config_loglevel: "error", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false", ...env },
  });
}

/** The client as a worker has it: packed by `npm run pack:client`, installed into an empty project. */
export interface InstalledClient {
  /** The scratch directory holding the tarball and the project; remove() deletes it. */
  readonly workDir: string;
  readonly tarball: string;
  /** The project: a package.json and what `npm install <tarball>` made of it. */
  readonly consumer: string;
  /** node_modules/.bin/ha-module in the project. */
  readonly bin: string;
  /** Seconds each step took: pack, install. */
  readonly seconds: { readonly pack: number; readonly install: number };
  remove(): void;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return (performance.now() - started) / 1000;
}

/**
 * Packs the client with the repository's script (scripts/pack-client.mjs, what `npm run
 * pack:client` runs) and installs the tarball into an empty ES-module project with a plain
 * `npm install <tarball>`: no --omit, no --ignore-scripts.
 */
export async function installClient(): Promise<InstalledClient> {
  const workDir = mkdtempSync(path.join(os.tmpdir(), "ha-module-client-"));
  try {
    const pack = await timed(() => execFileAsync(process.execPath, [path.join(ROOT, "scripts", "pack-client.mjs"), "--out-dir", workDir], { cwd: ROOT, timeout: STEP_TIMEOUT_MS }));
    const tarballs = readdirSync(workDir).filter((name) => /^ha-module-.*\.tgz$/.test(name));
    if (tarballs.length !== 1) throw new Error(`pack:client wrote ${JSON.stringify(tarballs)} into ${workDir}, not one tarball`);
    const tarball = path.join(workDir, tarballs[0]!);
    const consumer = path.join(workDir, "consumer");
    mkdirSync(consumer);
    writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    const install = await timed(() => npm(["install", tarball], consumer));
    return {
      workDir,
      tarball,
      consumer,
      bin: path.join(consumer, "node_modules", ".bin", "ha-module"),
      seconds: { pack, install },
      remove: () => rmSync(workDir, { recursive: true, force: true, maxRetries: 5 }),
    };
  } catch (error) {
    rmSync(workDir, { recursive: true, force: true, maxRetries: 5 });
    throw error;
  }
}

/** Bytes of every file under `dir`, and how many files there are. */
export function treeSize(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    files += 1;
    bytes += statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return { bytes, files };
}
