#!/usr/bin/env node
/**
 * The SDK's public API as a reviewed report (`review/ha-module.api.md`), kept by API
 * Extractor as the Azure SDK for JavaScript keeps its packages' reports:
 *
 *   npm run api:check    compares the SDK's exports with the report; fails, printing the
 *                        difference, when a name or a signature changed (npm test runs it:
 *                        test/package/api-report.test.ts)
 *   npm run api:update   writes the report anew: commit it with the change that made it
 *
 * Both compile the declarations of `ha-module/sdk` (shared/sdk/index.ts and what it
 * imports, contract types included) into a temporary directory first, so they read the
 * sources as they are, not a stale build. Every exported symbol must carry a doc comment
 * (ae-undocumented) and every type a signature mentions must be exported too
 * (ae-forgotten-export): either is an error of the check, and of the update.
 *
 * The same run can write the declarations rolled up into one file (`rollupApi`), which is
 * the `index.d.ts` of the client package (scripts/pack-client.mjs).
 *
 * Usage: node scripts/api-report.mjs [--update] [--root <source tree>]
 */
import { Extractor, ExtractorConfig, ExtractorLogLevel } from "@microsoft/api-extractor";
import console from "node:console";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import ts from "typescript";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The checked-in report, relative to the source tree. */
export const REPORT = "review/ha-module.api.md";

/**
 * What public signatures mention but the SDK does not export, on purpose: the table behind
 * ErrorCode (a value of the service's contract), and the base class of the objects with
 * events with its listener registry (their on() and off() are public, the class is not).
 * Any other type a signature mentions must be exported (ae-forgotten-export).
 */
const INTERNAL = new Set(["ERROR_STATUS", "Evented", "Listeners", "ReportingListeners"]);

/** The SDK's entry, relative to the source tree. */
const ENTRY = "shared/sdk/index.ts";

/**
 * Emits the declarations of the SDK's entry and everything it imports under `outDir`,
 * with the repository's compiler options. Throws with TypeScript's messages when the
 * sources do not compile.
 */
function emitDeclarations(root, outDir) {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n")); } });
  const options = {
    ...parsed.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    sourceMap: false,
    incremental: false,
    outDir,
    rootDir: root,
    // The tree under --root may hold no node_modules of its own (a planted copy).
    typeRoots: [path.join(ROOT, "node_modules", "@types")],
  };
  const program = ts.createProgram([path.join(root, ENTRY)], options);
  const result = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length > 0) {
    const host = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => "\n" };
    throw new Error(`the SDK does not compile:\n${ts.formatDiagnostics(diagnostics, host)}`);
  }
  return path.join(outDir, ENTRY.replace(/\.ts$/, ".d.ts"));
}

/**
 * Runs API Extractor over the SDK under `root`. `update`: write the report when it
 * differs; otherwise leave it and say so. `rollup`: also write the declarations as one
 * file there. Resolves with whether the report differs from the SDK, API Extractor's
 * messages (each a line), and, when it differs, the report the SDK would have.
 */
export async function extractApi({ root = ROOT, update = false, rollup } = {}) {
  const work = mkdtempSync(path.join(os.tmpdir(), "ha-module-api-"));
  try {
    const entry = emitDeclarations(root, path.join(work, "declarations"));
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
    const reportFolder = path.join(root, path.dirname(REPORT));
    const config = ExtractorConfig.prepare({
      configObjectFullPath: undefined,
      packageJsonFullPath: path.join(ROOT, "package.json"),
      packageJson: { name: manifest.name, version: manifest.version },
      configObject: {
        projectFolder: path.join(work, "declarations"),
        mainEntryPointFilePath: entry,
        compiler: {
          overrideTsconfig: {
            compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2023"], types: ["node"], typeRoots: [path.join(ROOT, "node_modules", "@types")], strict: true, skipLibCheck: true },
            files: [entry],
          },
        },
        apiReport: {
          enabled: true,
          reportFileName: path.basename(REPORT, ".api.md"),
          reportFolder,
          reportTempFolder: path.join(work, "report"),
          // What the SDK keeps internal on purpose (INTERNAL) is in the report all the same, so a change of it shows.
          includeForgottenExports: true,
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: rollup !== undefined, untrimmedFilePath: rollup ?? "" },
        tsdocMetadata: { enabled: false },
        newlineKind: "lf",
        messages: {
          compilerMessageReporting: { default: { logLevel: "error" } },
          extractorMessageReporting: {
            default: { logLevel: "error" },
            // The SDK has one release level: everything it exports is public.
            "ae-missing-release-tag": { logLevel: "none" },
          },
          // The doc comments are read in editors, which show them as written: TSDoc's escapes
          // (`\@azure/cosmos`, `\{`) would only make them harder to read there.
          tsdocMessageReporting: { default: { logLevel: "none" } },
        },
      },
    });
    const messages = [];
    const result = Extractor.invoke(config, {
      localBuild: update,
      messageCallback: (message) => {
        message.handled = true;
        const forgotten = message.messageId === "ae-forgotten-export" ? /The symbol "([^"]+)"/.exec(message.text)?.[1] : undefined;
        if (forgotten !== undefined && INTERNAL.has(forgotten)) return;
        // API Extractor's own account of the report (copied, changed): said below, in our words.
        if (message.messageId.startsWith("console-")) return;
        if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) {
          const where = message.sourceFilePath === undefined ? "" : `${path.relative(work, message.sourceFilePath)}:${message.sourceFileLine}: `;
          messages.push(`${where}${message.text} (${message.messageId})`);
        }
      },
    });
    const reportPath = path.join(reportFolder, path.basename(REPORT));
    const proposed = path.join(work, "report", path.basename(REPORT));
    const wanted = existsSync(proposed) ? readFileSync(proposed, "utf8") : undefined;
    // Every error and warning reaches messageCallback; the INTERNAL ones were left out there.
    return { succeeded: messages.length === 0, changed: result.apiReportChanged, messages, reportPath, wanted };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The lines that differ between the checked-in report and the one the sources make, in
 * order, `-` (only in the checked-in one) and `+` (only in the new one), each run headed by
 * its line number in the checked-in report: a longest-common-subsequence diff (the reports
 * are a few hundred lines).
 */
export function reportDifference(checkedIn, wanted) {
  const before = checkedIn.split("\n");
  const after = wanted.split("\n");
  // common[i][j]: the longest common subsequence of before[i..] and after[j..].
  const common = Array.from({ length: before.length + 1 }, () => new Uint32Array(after.length + 1));
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) common[i][j] = before[i] === after[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
  }
  const lines = [];
  let inRun = false;
  for (let i = 0, j = 0; i < before.length || j < after.length; ) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      inRun = false;
      i++;
      j++;
      continue;
    }
    if (!inRun) lines.push(`@@ line ${i + 1}`);
    inRun = true;
    if (i < before.length && (j === after.length || common[i + 1][j] >= common[i][j + 1])) lines.push(`- ${before[i++]}`);
    else lines.push(`+ ${after[j++]}`);
  }
  return lines.join("\n");
}

async function main() {
  const { values } = parseArgs({ options: { update: { type: "boolean", default: false }, root: { type: "string", default: ROOT } } });
  const root = path.resolve(values.root);
  const { succeeded, changed, messages, reportPath, wanted } = await extractApi({ root, update: values.update });
  for (const line of messages) console.error(`api: ${line}`);
  const shown = path.relative(process.cwd(), reportPath) || reportPath;
  if (changed && !values.update) {
    const checkedIn = existsSync(reportPath) ? readFileSync(reportPath, "utf8") : "";
    console.error(`api: the SDK's exports differ from ${shown}:\n${reportDifference(checkedIn, wanted ?? "")}\n` + "api: if the change is intended, run `npm run api:update` and commit the report with it.");
  } else if (changed) console.log(`api: wrote ${shown}`);
  else console.log(`api: ${shown} matches the SDK's exports`);
  if (!succeeded || (changed && !values.update)) process.exitCode = 1;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`api: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
