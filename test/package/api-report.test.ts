/**
 * The SDK's public API is a reviewed surface (docs/sdk.md, "The public API"): the report
 * review/ha-module.api.md, kept by API Extractor through scripts/api-report.mjs, must match
 * what `ha-module/sdk` exports, name for name and signature for signature, and every
 * exported symbol must be documented. An intended change updates the report in the same
 * commit (`npm run api:update`). The check is seen to fail on changes planted in a copy of
 * the sources: a changed signature, an undocumented export, a type a signature mentions
 * but the entry does not export.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

interface ApiCheck {
  readonly succeeded: boolean;
  readonly changed: boolean;
  readonly messages: readonly string[];
  readonly reportPath: string;
  readonly wanted: string | undefined;
}
interface ApiReportModule {
  REPORT: string;
  extractApi(options?: { root?: string }): Promise<ApiCheck>;
  reportDifference(checkedIn: string, wanted: string): string;
}
const { REPORT, extractApi, reportDifference } = (await import(path.join(ROOT, "scripts", "api-report.mjs"))) as ApiReportModule;

const copies: string[] = [];
afterAll(() => {
  for (const copy of copies) rmSync(copy, { recursive: true, force: true });
});

/** The SDK's sources and the report in a scratch tree, with `plant` applied to one file. */
function plantedCopy(file: string, plant: (source: string) => string): string {
  const copy = mkdtempSync(path.join(os.tmpdir(), "ha-module-api-plant-"));
  copies.push(copy);
  for (const part of ["shared/sdk", "shared/contract", "review", "tsconfig.json"]) cpSync(path.join(ROOT, part), path.join(copy, part), { recursive: true });
  const target = path.join(copy, file);
  const before = readFileSync(target, "utf8");
  const after = plant(before);
  expect(after, `the plant did not change ${file}`).not.toBe(before);
  writeFileSync(target, after);
  return copy;
}

describe("the SDK's API report", () => {
  it(`${REPORT} matches the SDK's exports, and every export is documented`, async () => {
    const check = await extractApi();
    const checkedIn = readFileSync(check.reportPath, "utf8");
    expect(check.changed ? reportDifference(checkedIn, check.wanted ?? "") : "", "the SDK's exports changed: if intended, run `npm run api:update` and commit the report").toBe("");
    expect(check.messages).toEqual([]);
    expect(check.succeeded).toBe(true);
  }, 120_000);

  it("fails when an exported signature changes (a planted wider parameter of LeaseTransport.release, which still compiles)", async () => {
    const copy = plantedCopy("shared/sdk/transport/lease-transport.ts", (source) =>
      source.replace("release(utype: string, uuid: string, options?: ReleaseOptions)", "release(utype: string, uuid: string | number, options?: ReleaseOptions)"),
    );
    const check = await extractApi({ root: copy });
    expect(check.changed).toBe(true);
    const difference = reportDifference(readFileSync(check.reportPath, "utf8"), check.wanted ?? "");
    expect(difference).toMatch(/^- +release\(utype: string, uuid: string, options\?: ReleaseOptions\): Promise<ReleaseResult>;$/m);
    expect(difference).toMatch(/^\+ +release\(utype: string, uuid: string \| number, options\?: ReleaseOptions\): Promise<ReleaseResult>;$/m);
  }, 120_000);

  it("fails on an undocumented export, and on a type a signature mentions that the entry does not export", async () => {
    const copy = plantedCopy("shared/sdk/index.ts", (source) =>
      source.replace(
        'export { HaClient, type HaClientOptions } from "./transport/ha-client.js";',
        'export { HaClient, type HaClientOptions } from "./transport/ha-client.js";\ninterface Unexported { readonly x: number }\nexport function planted(): Unexported { return { x: 1 }; }',
      ),
    );
    const check = await extractApi({ root: copy });
    expect(check.succeeded).toBe(false);
    expect(check.messages).toEqual(
      expect.arrayContaining([expect.stringMatching(/Missing documentation for "planted".*\(ae-undocumented\)/), expect.stringMatching(/The symbol "Unexported" needs to be exported.*\(ae-forgotten-export\)/)]),
    );
  }, 120_000);
});
