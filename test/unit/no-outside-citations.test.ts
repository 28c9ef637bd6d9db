import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The repository cites only what a reader of it can open: its own docs (docs/protocol.md#…)
 * or plain words. A team's private specification ("SPEC §4"), its design notes
 * ("seed 001", `shared/seeds/…`) and its issue tracker ("issue 13", "#13") are not in the
 * repository, so no file of what ships or documents it may cite them. Another project's
 * issue is fine when it names the project (`orleans#3261`).
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const SCANNED = ["shared", "functions", "infra", "bench", "scripts", "examples", "docs", "README.md"];
/** Text files only; stylesheets and SVG are left out because colours (`#333`) look like issue numbers. */
const TEXT = /\.(ts|mts|mjs|js|json|md|bicep|bicepparam|html|txt|sh|ya?ml)$/;

const FORMS: ReadonlyArray<readonly [string, RegExp]> = [
  ["the team's specification", /\bSPEC\b/g],
  ["a design note", /\bseeds? ?00\d\b|\bseeds\//g],
  ["an issue number", /\b[Ii]ssues? #?\d+|(?<![\w&/[\]])#\d+\b(?!-)/g],
];

/** Every citation of something outside the repository in `text`, as `line: form: "match"`. */
function outsideCitations(text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, index) => {
    for (const [form, pattern] of FORMS) for (const match of line.matchAll(pattern)) found.push(`${index + 1}: ${form}: "${match[0]}"`);
  });
  return found;
}

function scannedFiles(): string[] {
  return SCANNED.flatMap((entry) => {
    const full = path.join(ROOT, entry);
    if (entry.endsWith(".md")) return [full];
    return readdirSync(full, { recursive: true, encoding: "utf8" })
      .filter((file) => TEXT.test(file))
      .map((file) => path.join(full, file));
  });
}

describe("no file cites a document the repository lacks", () => {
  it.each([
    ["see SPEC §4", "the team's specification"],
    ["(seed 004: a restart…)", "a design note"],
    ["seeds 001 and 004", "a design note"],
    ["as shared/seeds/002 says", "a design note"],
    ["before issue 13's overload work", "an issue number"],
    ["the fix of #13", "an issue number"],
  ])("finds a planted citation: %j", (text, form) => {
    expect(outsideCitations(text).join("\n")).toContain(form);
  });

  it.each([
    ["another project's issue", "orleans#3261 and [azure-functions-host#11625](https://github.com/Azure/azure-functions-host/issues/11625)"],
    ["an anchor", "[Publish the app](#2-publish-the-app)"],
    ["an HTML entity", "&#39;"],
    ["a random seed", "replay with HA_SIM_SEED=42; seeds 1–500"],
  ])("leaves %s alone", (_what, text) => {
    expect(outsideCitations(text)).toEqual([]);
  });

  it("in shared/, functions/, infra/, bench/, scripts/, examples/, docs/ and README.md", () => {
    const files = scannedFiles();
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((file) => outsideCitations(readFileSync(file, "utf8")).map((citation) => `${path.relative(ROOT, file)}:${citation}`));
    expect(offenders).toEqual([]);
  });
});
