import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Generated files a contributor makes by following the docs must never show up as changes to commit. */
describe(".gitignore", () => {
  it.each(["ha-module-0.1.0.tgz", "dist/shared/cli/main.js", "bench-results/x.json", "ha-module.zip"])("ignores %s", (path) => {
    // `git check-ignore` exits 0 and prints the path when it is ignored, 1 when not.
    expect(execFileSync("git", ["check-ignore", "--no-index", path], { cwd: ROOT, encoding: "utf8" }).trim()).toBe(path);
  });
});
