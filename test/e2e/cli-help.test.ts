import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli as run } from "../helpers/sdk-cli-process.js";

/** `--help`, `-h` and `--version` of the built `ha-module`, as a newcomer types them: no service needed. */

const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

describe("ha-module --help and --version", () => {
  it("--help lists every command and the exit codes scripts can test, on stdout, exit 0", async () => {
    const { code, stdout } = await run(["--help"]);
    expect(code).toBe(0);
    for (const command of ["serve", "primary [utype]", "elect <utype>", "run <utype>", "release <utype>", "handover <utype>"]) expect(stdout).toContain(`  ${command}`);
    expect(stdout).toMatch(/^ {2}3 +primary <utype>, release, handover: the role has no live primary/m);
    expect(stdout).toMatch(/^ {2}4 +elect, run --timeout: not elected in time/m);
    expect(stdout).toMatch(/^ {2}127 +run: the command was not found/m);
  });

  it.each([
    [["elect", "--help"], "elect", ["--address", "--timeout", "--endpoint", "--key"], ["--check-port", "--watch"]],
    [["primary", "-h"], "primary", ["--watch", "--endpoint", "--key"], ["--address", "--check-port", "--timeout"]],
    [["run", "x", "--help", "--", "true"], "run", ["--address", "--check-port", "--check-host", "--grace-ms", "--timeout"], ["--watch"]],
    [["help", "release"], "release", ["--uuid", "--revoke", "--lease", "--endpoint"], ["--address"]],
    [["help", "handover"], "handover", ["--to", "--endpoint"], ["--address"]],
  ])("%j shows that command's usage with exactly the options it takes, exit 0", async (args, name, listed, absent) => {
    const { code, stdout, stderr } = await run(args);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout).toMatch(new RegExp(`^Usage: ha-module ${name} `));
    for (const option of listed) expect(stdout).toMatch(new RegExp(`^ {2}${option}\\b`, "m"));
    for (const option of absent) expect(stdout).not.toMatch(new RegExp(`^ {2}${option}\\b`, "m"));
  });

  it("--help wins over a wrong argument beside it", async () => {
    const { code, stdout } = await run(["elect", "--nope", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: ha-module elect /);
  });

  it("the exit-code table of docs/cli.md says what --help says", async () => {
    const { stdout } = await run(["--help"]);
    const fromHelp = [...stdout.matchAll(/^ {2}(\d+) +(.+)$/gm)].map(([, code, meaning]) => [code, meaning!.replace(/`/g, "")]);
    const page = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");
    const fromPage = [...page.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map(([, code, meaning]) => [code, meaning!.replace(/`/g, "")]);
    expect(fromPage).toEqual(fromHelp);
  });

  it.each([["--version"], ["-v"], ["version"]])("%s prints the package's version, exit 0", async (flag) => {
    const { code, stdout } = await run([flag]);
    expect(code).toBe(0);
    expect(stdout).toBe(`ha-module ${VERSION}\n`);
  });
});
