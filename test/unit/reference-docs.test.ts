import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { timers } from "../../functions/timers.js";

/**
 * The references in docs/ are complete: docs/api.md has a row for every operation the
 * route table serves, with the refusals that operation documents; docs/deploy/background.md
 * names every function and timer Azure registers; docs/configuration.md names every environment
 * variable the service, the SDK or the command line reads. A new route or setting cannot
 * ship undocumented.
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const read = (file: string): string => readFileSync(path.join(ROOT, file), "utf8");

/** The table row of `page` that starts with the cell `| \`name\` |`. */
function row(page: string, name: string): string | undefined {
  return page.split("\n").find((line) => line.startsWith(`| \`${name}\` |`));
}

/** Every environment variable name the source files under `dirs` read or mention. */
function environmentNames(dirs: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const dir of dirs) {
    for (const file of readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts")) continue;
      for (const [name] of read(path.join(dir, file)).matchAll(/\b(?:HA_[A-Z0-9_]+|APPLICATIONINSIGHTS_[A-Z_]+)\b/g)) names.add(name);
    }
  }
  return names;
}

/** The option names of `export interface <name> [extends LoopOptions<…>] { … }` in an SDK source file, the inherited ones included. */
function optionNames(file: string, name: string): string[] {
  const found = new RegExp(`export interface ${name}(?:<\\w+>)?(?: extends (\\w+)<\\w+>)? \\{([\\s\\S]*?)\\n\\}`).exec(read(file));
  if (found === null) throw new Error(`${file} has no interface ${name}`);
  const [, base, body] = found;
  if (base !== undefined && base !== "LoopOptions") throw new Error(`${file}: ${name} extends ${base}, which this test does not read`);
  const inherited = base === undefined ? [] : optionNames("shared/sdk/loop/loop-setup.ts", base);
  return [...inherited, ...[...body!.matchAll(/^ {2}readonly (\w+)\??:/gm)].map((option) => option[1]!)];
}

describe("the reference pages in docs/", () => {
  it("docs/api.md: a row per operation of functions/routes.ts, with its method, route and the refusals it documents", () => {
    const page = read("docs/api.md");
    expect(operations.length).toBeGreaterThanOrEqual(14);
    const problems = operations.flatMap((operation) => {
      const found = row(page, operation.name);
      if (found === undefined) return [`${operation.name}: no row`];
      const missing = [`\`${operation.method} /api/${operation.route}\``, ...(operation.doc.errors ?? []).map((error) => `\`${error.code}\``)].filter((text) => !found.includes(text));
      return missing.map((text) => `${operation.name}: its row lacks ${text}`);
    });
    expect(problems).toEqual([]);
  });

  it("docs/deploy/background.md: every function and timer Azure registers", () => {
    const page = read("docs/deploy/background.md");
    const missing = [...operations.map((operation) => operation.name), ...timers.map((timer) => timer.name)].filter((name) => row(page, name) === undefined);
    expect(missing).toEqual([]);
  });

  it("docs/configuration.md: every option of the SDK's classes, in its SDK section", () => {
    const page = read("docs/configuration.md");
    const section = page.slice(page.indexOf("## The SDK"), page.indexOf("## The command line"));
    const options = [
      ["shared/sdk/election/elector-options.ts", "PrimaryElectorOptions"],
      ["shared/sdk/transport/ha-client.ts", "HaClientOptions"],
      ["shared/sdk/membership/member-session.ts", "MemberSessionOptions"],
      ["shared/sdk/membership/members-watcher.ts", "MembersWatcherOptions"],
    ].flatMap(([file, name]) => optionNames(file!, name!).map((option) => `${name}.${option}`));
    expect(options.length).toBeGreaterThan(25);
    expect(options.filter((option) => !section.includes(`\`${option.split(".")[1]}\``))).toEqual([]);
  });

  it("docs/configuration.md: every environment variable read in shared/ and functions/", () => {
    const page = read("docs/configuration.md");
    const names = environmentNames(["shared", "functions"]);
    expect(names.size).toBeGreaterThan(30);
    expect([...names].filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
  });
});
