import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findCommandProblem } from "../../shared/cli/supervise/command-lookup.js";

/** `run` looks its command up before competing, as execvp will: 127 not found, 126 not executable. */
describe.runIf(process.platform !== "win32")("findCommandProblem", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "ha-lookup-"));
    mkdirSync(join(dir, "bin"));
    writeFileSync(join(dir, "bin", "job"), "#!/bin/sh\nexit 0\n");
    chmodSync(join(dir, "bin", "job"), 0o755);
    writeFileSync(join(dir, "bin", "plain"), "not executable\n");
    chmodSync(join(dir, "bin", "plain"), 0o644);
    mkdirSync(join(dir, "bin", "folder"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const env = (): NodeJS.ProcessEnv => ({ PATH: `/nonexistent:${join(dir, "bin")}` });

  it.each([
    ["job", undefined],
    ["./bin/job", undefined],
    ["nope-not-a-command", { exitCode: 127, message: "nope-not-a-command: command not found on PATH." }],
    ["./bin/nope", { exitCode: 127, message: "./bin/nope: no such file." }],
    ["./bin/plain", { exitCode: 126, message: "./bin/plain: permission denied (not executable)." }],
    ["./bin/folder", { exitCode: 126, message: "./bin/folder: is a directory." }],
  ])("%s", (command, expected) => {
    expect(findCommandProblem(command, env(), dir)).toEqual(expected);
  });

  it("a name found on PATH only as a file that cannot be executed is 126, naming the file", () => {
    expect(findCommandProblem("plain", env(), dir)).toEqual({ exitCode: 126, message: `${join(dir, "bin", "plain")}: permission denied (not executable).` });
  });

  it("an empty PATH entry is the current directory, as execvp reads it", () => {
    expect(findCommandProblem("job", { PATH: "" }, join(dir, "bin"))).toBeUndefined();
  });
});
