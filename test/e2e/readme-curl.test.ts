import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

const execFileAsync = promisify(execFile);

/**
 * The curl walk-through of docs/api.md (the README points there), copied as a reader would
 * copy it: the block is run with bash against a real service (only its API line changed),
 * and each call's answer checked. Needs curl and jq, as the page does.
 */
function apiCurlBlock(): string {
  const page = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
  const block = /```sh\n(API=http:\/\/127\.0\.0\.1:7071\/api\n[\s\S]*?)```/.exec(page)?.[1];
  if (block === undefined) throw new Error("docs/api.md has no ```sh block that starts with API=http://127.0.0.1:7071/api");
  return block;
}

describe("the curl examples of docs/api.md", () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await startServiceProcess();
  });

  afterAll(async () => {
    await service?.stop();
  });

  it("work when copied: acquire, then release with the token jq took from the answer", async () => {
    const script = apiCurlBlock()
      .replace(/^API=.*$/m, `API=${service.url}`)
      // One answer per line: curl -s prints none after the body.
      .replace(/^(curl [^\n]*[^\\\n])$/gm, "$1; echo");
    const { stdout, stderr } = await execFileAsync("bash", ["-e", "-o", "pipefail", "-c", script], { timeout: 30_000 });
    const answers = stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    // GetPrimary (nobody yet), then the release with $LEASE: the role is free at once.
    expect(answers[0], stderr).toMatchObject({ utype: "scheduler", primary: null, epoch: 0 });
    expect(answers[1], stdout).toMatchObject({ utype: "scheduler", primary: null, epoch: expect.any(Number) });
    // The history shows the term ended by that release, not by an expiry.
    const history = answers.find((answer) => Array.isArray(answer["terms"]));
    expect(history, stdout).toMatchObject({ terms: [{ epoch: answers[1]!["epoch"], uuid: "3f0c9a2e-0b1d-4c51-9a55-0a4c8f1e7d21", endedBy: "released" }] });
  });
});
