import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHAOS_MAIN_PATH } from "./paths.js";

/** The parts of `--report-json` the tests read. */
export interface ChaosReport {
  readonly record: {
    readonly faults: ReadonlyArray<{ readonly kind: string; readonly target?: string }>;
    readonly leftovers: ReadonlyArray<{ readonly pid: number; readonly what: string }>;
    readonly incidents: ReadonlyArray<{ readonly kind: string; readonly what: string }>;
  };
  readonly verdict: {
    readonly violations: ReadonlyArray<{ readonly kind: string; readonly message: string }>;
    readonly violationCounts: Record<string, number>;
    readonly lines: number;
    readonly writers: number;
    readonly outcomes: ReadonlyArray<{ readonly kind: string; readonly hitPrimary: boolean; readonly recoveryMs?: number; readonly failoverMs?: number }>;
  };
}

/** Runs `npm run chaos`'s entry point with `args` (as the built harness, a real process); for tests. */
export async function runChaosCli(args: readonly string[], timeoutMs: number): Promise<{ code: number | null; output: string; report: ChaosReport | undefined }> {
  const dir = mkdtempSync(join(tmpdir(), "ha-chaos-test-"));
  // Under root, --store postgres runs PostgreSQL as nobody, who must enter the work directory.
  chmodSync(dir, 0o755);
  const reportPath = join(dir, "report.json");
  try {
    // Its work directory inside ours: a run with violations keeps it, and this removes it.
    const workDir = join(dir, "work");
    const child = spawn(process.execPath, [CHAOS_MAIN_PATH, ...args, "--work-dir", workDir, "--report-json", reportPath], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    // SIGINT is the harness's own "stop after this cycle": it still heals, stops and judges.
    const timer = setTimeout(() => child.kill("SIGINT"), timeoutMs);
    const code = await new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
    clearTimeout(timer);
    let report: ChaosReport | undefined;
    try {
      report = JSON.parse(readFileSync(reportPath, "utf8")) as ChaosReport;
    } catch {
      report = undefined;
    }
    return { code, output, report };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
