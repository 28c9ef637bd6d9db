import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/** The built entry (`npm test` builds before vitest runs) and the folder it must list. */
const ENTRY = fileURLToPath(new URL("../../dist/bench/main.js", import.meta.url));
const BENCH = fileURLToPath(new URL("../../bench/", import.meta.url));

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function entry(...args: string[]): Promise<Outcome> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [ENTRY, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== "number") throw error;
    return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

/** The benchmarks `--help` lists: name → its one line. */
function listed(help: string): Map<string, string> {
  const section = help.slice(help.indexOf("\nBenchmarks"));
  return new Map([...section.matchAll(/^ {2}(\S+) +(\S.*)$/gm)].map(([, name, about]) => [name!, about!]));
}

/**
 * `npm run bench -- --help` against bench/ itself: every file directly in bench/ but the
 * entry is a benchmark, so a new one cannot be added without its row, and each listed name
 * runs and answers its own `--help` (the row points at a file that exists and starts).
 */
describe("npm run bench -- --help", () => {
  it("lists every benchmark file in bench/, each with one line of what it measures", async () => {
    const { code, stdout } = await entry("--help");
    expect(code).toBe(0);
    const files = readdirSync(BENCH, { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name !== "main.ts")
      .map((entry) => entry.name.replace(/\.(ts|mjs)$/, ""));
    const names = listed(stdout);
    expect([...names.keys()].sort()).toEqual(files.sort());
    for (const about of names.values()) expect(about.length).toBeGreaterThan(20);
  });

  it("runs each listed benchmark with its own --help", { timeout: 180_000 }, async () => {
    const names = [...listed((await entry("--help")).stdout).keys()];
    expect(names.length).toBeGreaterThan(0);
    // Four at a time: each is a node process loading its benchmark's modules.
    const queue = [...names];
    const answers = new Map<string, Outcome>();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) answers.set(name, await entry(name, "--help"));
      }),
    );
    for (const name of names) {
      const answer = answers.get(name)!;
      expect({ name, code: answer.code, stderr: answer.stderr }).toEqual({ name, code: 0, stderr: "" });
      expect(answer.stdout.startsWith(`Usage: npm run bench -- ${name}`), answer.stdout).toBe(true);
    }
  });

  it("refuses a name it does not know, or none, and says which it knows", async () => {
    const typo = await entry("comapre");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("no benchmark is called 'comapre'. Did you mean compare?");
    expect(listed(typo.stderr).has("compare")).toBe(true);
    const none = await entry();
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("name a benchmark");
  });

  it("passes a benchmark's bad option to it, which says what is wrong with its usage", async () => {
    const wrong = await entry("handover", "--trails", "2");
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("Unknown option '--trails'");
    expect(wrong.stderr).toContain("Usage: npm run bench -- handover");
  });
});
