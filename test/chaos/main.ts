/**
 * `npm run chaos -- [options]`: real processes, real faults, and a judge that can fail
 * (docs/chaos.md). Starts `ha-module serve` and K `ha-module run` participants whose
 * workers append to one log, injects a seeded schedule of faults, then judges the log.
 * Exit code: 0 no violation, 1 violations, 2 bad options or a harness failure.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runChaos } from "./harness.js";
import { judge } from "./judge.js";
import { parseLog } from "./log-line.js";
import { ChaosUsageError, USAGE, parseChaosOptions, type ChaosOptions } from "./options.js";
import { formatSummary, replayCommand } from "./summary.js";

async function main(): Promise<number> {
  let options: ChaosOptions;
  try {
    options = parseChaosOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof ChaosUsageError)) throw error;
    console.error(`chaos: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const workDir = options.workDir === undefined ? mkdtempSync(join(tmpdir(), "ha-chaos-")) : resolve(options.workDir);
  mkdirSync(workDir, { recursive: true });
  if (readdirSync(workDir).length > 0) {
    // A service's data from an earlier run would carry its epochs into this one.
    console.error(`chaos: --work-dir ${workDir} is not empty; give a new or empty directory.`);
    return 2;
  }
  const began = performance.now();
  const say = (text: string): void => console.log(`[chaos ${((performance.now() - began) / 1000).toFixed(1)}s] ${text}`);
  say(`seed ${options.seed}; replay with: ${replayCommand(options)}`);
  say(`work directory: ${workDir}`);

  const stop = new AbortController();
  const onSignal = (): void => {
    say("interrupted: healing the current fault, then judging what ran");
    stop.abort();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  let failed = false;
  try {
    const record = await runChaos(options, workDir, say, stop.signal);
    say("judging the log");
    const verdict = judge({
      log: parseLog(readFileSync(record.logPath, "utf8")),
      faults: record.faults,
      intervalMs: options.intervalMs,
      timeoutMs: options.timeoutMs,
      slackMs: options.slackMs,
      observedUntilNs: record.observedUntilNs,
      leftovers: record.leftovers,
      incidents: record.incidents,
    });
    console.log(formatSummary(options, record, verdict));
    const report = JSON.stringify(
      { options, workDir, record, verdict: { ...verdict, writers: verdict.writers.length } },
      (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value),
      2,
    );
    writeFileSync(join(workDir, "report.json"), report);
    if (options.reportJson !== undefined) writeFileSync(options.reportJson, report);
    failed = verdict.violations.length > 0;
    return failed ? 1 : 0;
  } catch (error) {
    failed = true;
    console.error(`chaos: the harness failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 2;
  } finally {
    if (failed || options.keep || options.workDir !== undefined) say(`kept: ${workDir} (chaos.log, report.json and each process's output)`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
