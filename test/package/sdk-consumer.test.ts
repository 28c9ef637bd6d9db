/**
 * `ha-module/sdk` as users get it: the project is compiled and packed (`npm pack`), the
 * tarball installed into a scratch project without optional dependencies (no Azure
 * packages), and the README's worker type-checked there under `strict` and NodeNext with
 * the project's own TypeScript, then the SDK loaded by Node.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type * as TypeScript from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServiceProcess } from "../helpers/service-process.js";

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const STEP_TIMEOUT_MS = 120_000;

let workDir: string;
let consumer: string;
const seconds: Record<string, number> = {};

async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await run();
  } finally {
    seconds[name] = (performance.now() - started) / 1000;
  }
}

/** npm as `npm run` invoked it (vitest under npm test), or the one on PATH. */
function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  const npmCli = process.env["npm_execpath"];
  const [command, prefix] = npmCli !== undefined && /npm-cli\.js$/.test(npmCli) ? [process.execPath, [npmCli]] : ["npm", []];
  return execFileAsync(command, [...prefix, ...args], { cwd, timeout: STEP_TIMEOUT_MS, env: { ...process.env, npm_config_loglevel: "error" } });
}

/** The first ```ts block of a document that imports "ha-module/sdk": the README's worker, membership.md's session and watcher. */
function sdkBlock(document: string): string {
  const text = readFileSync(path.join(ROOT, document), "utf8");
  const block = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((found) => found[1] ?? "").find((code) => code.includes('from "ha-module/sdk"'));
  if (block === undefined) throw new Error(`${document} has no \`\`\`ts block importing "ha-module/sdk"`);
  return block;
}

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), "ha-module-sdk-consumer-"));
  const packageDir = path.join(workDir, "package");
  mkdirSync(packageDir);
  await step("compile", () =>
    execFileAsync(process.execPath, [TSC, "-p", path.join(ROOT, "tsconfig.build.json"), "--outDir", path.join(packageDir, "dist"), "--tsBuildInfoFile", path.join(workDir, "tsbuildinfo")], {
      cwd: ROOT,
      timeout: STEP_TIMEOUT_MS,
    }),
  );
  for (const file of ["package.json", "host.json", "bin"]) cpSync(path.join(ROOT, file), path.join(packageDir, file), { recursive: true });
  const packed = await step("pack", () => npm(["pack", "--ignore-scripts", "--json", "--pack-destination", workDir], packageDir));
  const tarball = path.join(workDir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);

  consumer = path.join(workDir, "consumer");
  mkdirSync(consumer);
  writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await step("install", () => npm(["install", tarball, "--omit=optional", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], consumer));
  writeFileSync(
    path.join(consumer, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        lib: ["ES2023"],
        types: ["node"],
        // @types/node from this repository: the consumer installs nothing but ha-module.
        typeRoots: [path.join(ROOT, "node_modules", "@types")],
        // The package's own declarations are checked too, not trusted.
        skipLibCheck: false,
        noEmit: true,
      },
      include: ["*.ts"],
    }),
  );
  writeFileSync(path.join(consumer, "readme-worker.ts"), sdkBlock("README.md"));
  writeFileSync(path.join(consumer, "membership-example.ts"), `${sdkBlock("docs/membership.md")}\nexport {};\n`);
  writeFileSync(path.join(consumer, "example-worker.ts"), readFileSync(path.join(ROOT, "examples", "worker.ts"), "utf8"));
  // If the SDK's types were `any`, these directives would be unused, which is an error itself.
  writeFileSync(
    path.join(consumer, "misuse.ts"),
    [
      'import { HaClient, PrimaryElector, type HeartbeatResult } from "ha-module/sdk";',
      "// @ts-expect-error utype must be a string",
      "new PrimaryElector({ utype: 1, endpoint: 'http://127.0.0.1:7071/api' });",
      "declare const result: HeartbeatResult;",
      "// @ts-expect-error only an accepted heartbeat carries a lease token",
      "export const token: string = result.lease;",
      "// @ts-expect-error heartbeat takes the PUT body, which has a uuid",
      "void new HaClient({ endpoint: 'http://127.0.0.1:7071/api' }).heartbeat('scheduler', { address: 'x' });",
      "",
    ].join("\n"),
  );
}, 4 * STEP_TIMEOUT_MS);

afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe("ha-module/sdk, packed and installed into a fresh project", () => {
  it("installs without the Azure server packages when optional dependencies are omitted", () => {
    console.log(`sdk consumer: ${Object.entries(seconds).map(([name, s]) => `${name} ${s.toFixed(1)} s`).join(", ")}`);
    expect(existsSync(path.join(consumer, "node_modules", "ha-module", "dist", "shared", "sdk", "index.d.ts"))).toBe(true);
    expect(existsSync(path.join(consumer, "node_modules", "@azure"))).toBe(false);
  });

  it("type-checks the README worker, the membership example of docs/membership.md and examples/worker.ts under strict and NodeNext, and refuses misuse", async () => {
    const checked = await step("typecheck", () =>
      execFileAsync(process.execPath, [TSC, "-p", path.join(consumer, "tsconfig.json")], { cwd: consumer, timeout: STEP_TIMEOUT_MS }).then(
        () => "",
        (error: { stdout?: string }) => error.stdout ?? String(error),
      ),
    );
    expect(checked).toBe("");
  });

  it("links the ha-module command; serve without the optional packages says what to install", async () => {
    const bin = path.join(consumer, "node_modules", ".bin", "ha-module");
    const { stdout } = await execFileAsync(bin, ["--version"], { cwd: consumer, timeout: 30_000 });
    expect(stdout).toMatch(/^ha-module \d+\.\d+\.\d+/);
    const serve = await execFileAsync(bin, ["serve"], { cwd: consumer, timeout: 30_000, env: { ...process.env, PORT: "0" } }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(serve).toMatchObject({ code: 1 });
    expect((serve as { stderr: string }).stderr).toMatch(/serve needs the Azure packages that ha-module lists as optional dependencies, and @azure\/\S+ is not installed/);
  });

  it("loads at run time with nothing but the SDK installed", async () => {
    const { stdout } = await execFileAsync(
      process.execPath,
      ["--input-type=module", "-e", "const sdk = await import('ha-module/sdk'); console.log(Object.keys(sdk).sort().join(' '));"],
      { cwd: consumer, timeout: 30_000 },
    );
    expect(stdout.trim()).toBe(
      "CorruptedMessageError ElectorMembership EndpointNotFoundError FencedOutError FencedWriteContendedError ForbiddenError HaClient HaRequestError ManagedIdentityCredential MemberSession MembersWatcher PrimaryElector SlowRoundTripWarning TermEndedError UnauthorizedError fencedBlob fencedCosmosItem fencedTableEntity systemElectorClock",
    );
  });

  it("runs the README worker unchanged against a service that requires a key; SIGINT (Ctrl-C) releases the lease", async () => {
    const ts = createRequire(import.meta.url)("typescript") as typeof TypeScript;
    const js = ts.transpileModule(sdkBlock("README.md"), { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } }).outputText;
    writeFileSync(path.join(consumer, "readme-worker.js"), js);
    const KEY = "readme-worker-key";
    const service = await startServiceProcess({ HA_API_KEY: KEY, HA_INTERVAL_MS: "200", HA_TIMEOUT_MS: "2000" });
    const worker = spawn(process.execPath, ["readme-worker.js"], {
      cwd: consumer,
      env: { ...process.env, HA_ENDPOINT: service.url, HA_API_KEY: KEY },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    worker.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    worker.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(worker, "exit");
    const scheduler = async (): Promise<{ primary: { address: string } | null; epoch: number }> =>
      (await fetch(`${service.url}/primary/scheduler`, { headers: { "x-functions-key": KEY } })).json() as Promise<{ primary: { address: string } | null; epoch: number }>;
    try {
      const deadline = performance.now() + 20_000;
      while ((await scheduler()).primary?.address !== os.hostname()) {
        if (performance.now() > deadline) throw new Error(`the README worker was not elected within 20 s:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // A person watching can tell which copy is primary.
      while (!/^elected: primary for scheduler at epoch 1$/m.test(output)) {
        if (performance.now() > deadline) throw new Error(`the README worker did not say it was elected:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      worker.kill("SIGINT");
      const [code] = (await exited) as [number | null];
      expect(code, output).toBe(0);
      expect(output).toMatch(/^demoted \(stopped\): no longer primary$/m);
      // Released at once, not left to expire (T = 2 s): a standby could take over now.
      expect(await scheduler()).toMatchObject({ primary: null, epoch: 1 });
      expect(output).not.toMatch(/ha: /);
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL");
      await service.stop();
    }
  });
});
