/**
 * The client as a worker gets it: packed by `npm run pack:client`, installed into an empty
 * project with a plain `npm install <tarball>` (test/helpers/client-package.ts). Nothing but
 * ha-module is installed, and it is small; its bin runs `--version`, `--help` and `elect`
 * against a real service, and says in one line where `serve` is; the README's worker is
 * type-checked there under `strict` and NodeNext with the project's own TypeScript, then run.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type * as TypeScript from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installClient, npm, treeSize, type InstalledClient } from "../helpers/client-package.js";
import { CliProcess } from "../helpers/sdk-cli-process.js";
import { startServiceProcess } from "../helpers/service-process.js";

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const STEP_TIMEOUT_MS = 120_000;
/** The most a worker's install may take on disk (npm's kB: 1000 bytes). */
const MAX_INSTALLED_BYTES = 1_000_000;

let client: InstalledClient;
let consumer: string;

/** The first ```ts block of a document that imports "ha-module/sdk": the README's worker, membership.md's session and watcher. */
function sdkBlock(document: string): string {
  const text = readFileSync(path.join(ROOT, document), "utf8");
  const block = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((found) => found[1] ?? "").find((code) => code.includes('from "ha-module/sdk"'));
  if (block === undefined) throw new Error(`${document} has no \`\`\`ts block importing "ha-module/sdk"`);
  return block;
}

beforeAll(async () => {
  client = await installClient();
  consumer = client.consumer;
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

afterAll(() => client?.remove());

describe("the ha-module client, packed and installed into an empty project", () => {
  it("installs with a plain npm install: ha-module alone, no dependency, no script, at most 1 MB", () => {
    const installed = treeSize(path.join(consumer, "node_modules", "ha-module"));
    console.log(
      `client: pack ${client.seconds.pack.toFixed(1)} s, install ${client.seconds.install.toFixed(1)} s; ` +
        `installed ${installed.files} files, ${(installed.bytes / 1000).toFixed(0)} kB`,
    );
    const lock = JSON.parse(readFileSync(path.join(consumer, "package-lock.json"), "utf8")) as { packages: Record<string, unknown> };
    expect(Object.keys(lock.packages).sort()).toEqual(["", "node_modules/ha-module"]);
    expect(readdirSync(path.join(consumer, "node_modules")).filter((name) => !name.startsWith("."))).toEqual(["ha-module"]);
    expect(installed.bytes).toBeLessThanOrEqual(MAX_INSTALLED_BYTES);
    const manifest = JSON.parse(readFileSync(path.join(consumer, "node_modules", "ha-module", "package.json"), "utf8")) as Record<string, unknown>;
    for (const field of ["dependencies", "optionalDependencies", "peerDependencies", "scripts"]) expect(manifest[field], field).toBeUndefined();
  });

  it("type-checks the README worker, the membership example of docs/membership.md and examples/worker.ts under strict and NodeNext, and refuses misuse", async () => {
    const checked = await execFileAsync(process.execPath, [TSC, "-p", path.join(consumer, "tsconfig.json")], { cwd: consumer, timeout: STEP_TIMEOUT_MS }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(checked).toBe("");
  });

  it("npx ha-module --version and --help run the installed command", async () => {
    const version = await npm(["exec", "--", "ha-module", "--version"], consumer);
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(version.stdout).toBe(`ha-module ${manifest.version}\n`);
    const help = await npm(["exec", "--", "ha-module", "--help"], consumer);
    for (const command of ["primary", "elect", "run", "release", "handover", "members", "join", "serve"]) expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
  });

  it("elect wins a running service's election, and SIGTERM releases the lease", async () => {
    const service = await startServiceProcess({ HA_INTERVAL_MS: "200", HA_TIMEOUT_MS: "2000" });
    const utype = `client-elect-${process.pid}`;
    const elect = new CliProcess("elect", ["elect", utype, "--endpoint", service.url], {}, { command: client.bin, env: { ...process.env } as Record<string, string>, cwd: consumer });
    try {
      const elected = await elect.waitFor((event) => event.event === "elected");
      expect(elected).toMatchObject({ utype, epoch: expect.any(Number) });
      elect.signal("SIGTERM");
      expect((await elect.exited).code, elect.stderr).toBe(0);
      const history = (await (await fetch(`${service.url}/primary/${utype}/history`)).json()) as { terms: { endedBy: string | null }[] };
      expect(history.terms[0]?.endedBy, JSON.stringify(history)).toBe("released");
    } finally {
      await elect.kill();
      await service.stop();
    }
  });

  it("serve says in one line that the service is not in the client, and where to run it", async () => {
    const serve = await execFileAsync(client.bin, ["serve"], { cwd: consumer, timeout: 30_000, env: { ...process.env, PORT: "0" } }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(serve).toMatchObject({ code: 1, stdout: "" });
    const { stderr } = serve as { stderr: string };
    expect(stderr.split("\n")).toEqual([expect.stringMatching(/^ha-module serve: the service is not part of this client .*`npm install && npm start`/), ""]);
  });

  it("gives the SDK as the package's main entry too", async () => {
    const { stdout } = await execFileAsync(
      process.execPath,
      ["--input-type=module", "-e", "const [main, sdk] = await Promise.all([import('ha-module'), import('ha-module/sdk')]); console.log(Object.keys(main).length > 0 && Object.keys(main).every((name) => main[name] === sdk[name]) && Object.keys(sdk).length === Object.keys(main).length);"],
      { cwd: consumer, timeout: 30_000 },
    );
    expect(stdout.trim()).toBe("true");
  });

  it("loads at run time with nothing but the SDK installed", async () => {
    const { stdout } = await execFileAsync(
      process.execPath,
      ["--input-type=module", "-e", "const sdk = await import('ha-module/sdk'); console.log(Object.keys(sdk).sort().join(' '));"],
      { cwd: consumer, timeout: 30_000 },
    );
    expect(stdout.trim()).toBe(
      "CorruptedMessageError ElectorMembership EndpointNotFoundError FencedOutError FencedWriteContendedError ForbiddenError HaClient HaRequestError ManagedIdentityCredential MemberSession MembersWatcher PrimaryElector SlowRoundTripWarning TermEndedError UnauthorizedError fencedBlob fencedCosmosItem fencedPostgresRow fencedTableEntity systemElectorClock",
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
      const { epoch } = await scheduler();
      while (!new RegExp(`^elected: primary for scheduler at epoch ${epoch}$`, "m").test(output)) {
        if (performance.now() > deadline) throw new Error(`the README worker did not say it was elected:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      worker.kill("SIGINT");
      const [code] = (await exited) as [number | null];
      expect(code, output).toBe(0);
      expect(output).toMatch(/^demoted \(stopped\): no longer primary$/m);
      // Released at once, not left to expire (T = 2 s): a standby could take over now.
      expect(await scheduler()).toMatchObject({ primary: null, epoch });
      expect(output).not.toMatch(/ha: /);
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL");
      await service.stop();
    }
  });
});
