/**
 * docs/cli.md: on a fresh clone, after `npm install`, `npx ha-module` runs the command line.
 * npm links a bin only if its file exists when it installs, so the bin must be a source
 * file (bin/ha-module.js), never build output; `prepare` builds dist/ (npm runs it on
 * `npm install`, and npx runs it when it links the clone), and the bin says what to do if
 * that was skipped (--ignore-scripts).
 */
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  version: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
};

/** npm as `npm run` invoked it (vitest under npm test), or the one on PATH. */
function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  const npmCli = process.env["npm_execpath"];
  const [command, prefix] = npmCli !== undefined && /npm-cli\.js$/.test(npmCli) ? [process.execPath, [npmCli]] : ["npm", []];
  return execFileAsync(command, [...prefix, ...args], { cwd, timeout: 220_000, env: { ...process.env, npm_config_loglevel: "error", ...env } });
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), "ha-fresh-clone-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true, maxRetries: 5 }));

describe("the ha-module bin on a fresh clone", () => {
  it("is a tracked source file, and npm install builds what it runs", async () => {
    const bin = manifest.bin["ha-module"]!;
    expect(bin.startsWith("dist/")).toBe(false);
    await execFileAsync("git", ["ls-files", "--error-unmatch", bin], { cwd: ROOT });
    expect(manifest.scripts["prepare"]).toMatch(/npm run build/);
  });

  it("says what to run when dist/ is not built, instead of failing to import", async () => {
    // The bin alone, as in a clone installed with --ignore-scripts.
    mkdirSync(path.join(scratch, "clone", "bin"), { recursive: true });
    const copy = path.join(scratch, "clone", manifest.bin["ha-module"]!);
    copyFileSync(path.join(ROOT, manifest.bin["ha-module"]!), copy);
    const failed = await execFileAsync(process.execPath, [copy, "--help"]).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toMatch(/ha-module: the command line is not built yet .* Run `npm run build` in /);
  });

  it("npx ha-module works in a clone that nothing has built yet (offline; the clone shares this node_modules)", async () => {
    // What a clone holds: the tracked files (and this checkout's uncommitted ones), no dist/.
    const clone = path.join(scratch, "fresh");
    const { stdout: listed } = await execFileAsync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, maxBuffer: 16 << 20 });
    for (const file of listed.split("\0").filter((name) => name !== "" && existsSync(path.join(ROOT, name)))) {
      mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
      copyFileSync(path.join(ROOT, file), path.join(clone, file));
    }
    symlinkSync(path.join(ROOT, "node_modules"), path.join(clone, "node_modules"));
    expect(existsSync(path.join(clone, "dist"))).toBe(false);
    const startedAt = performance.now();
    const { stdout } = await npm(["exec", "--offline", "--cache", path.join(scratch, "npm-cache"), "--", "ha-module", "--version"], clone);
    console.log(`npx ha-module --version on an unbuilt clone: ${((performance.now() - startedAt) / 1000).toFixed(1)} s (it builds first)`);
    expect(stdout).toBe(`ha-module ${manifest.version}\n`);
    // The build it runs first takes most of a minute on a busy 2-core machine.
  }, 240_000);
});
