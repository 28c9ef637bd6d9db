import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every relative link of README.md and of every page under docs/ leads somewhere: the file exists, and a
 * `#fragment` names a heading of the page it points to, as GitHub renders anchors. A page
 * renamed or a heading reworded cannot leave a dead link behind. So does every test the
 * pages name beside a promise: the cited file exists, and a test named after it in quotes
 * is still in that file (a test renamed or removed cannot leave a promise citing nothing).
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const PAGES = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join("docs", name))
    .sort(),
];

/** The text outside fenced code blocks, line by line (fenced lines blanked, so line numbers hold). */
function prose(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split("\n").map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      return "";
    }
    return fence === undefined ? line : "";
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1");
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}

/** The relative links of a page: `[text](target)` and images, outside code, without external ones. */
function relativeLinks(markdown: string): Array<{ line: number; target: string }> {
  return prose(markdown).flatMap((line, index) =>
    [...line.replace(/`[^`]*`/g, "``").matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
      .map((match) => match[1]!)
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
      .map((target) => ({ line: index + 1, target })),
  );
}

/** What is wrong with each relative link of `page` (a path from the root), given a reader of files. */
function brokenLinks(page: string, read: (file: string) => string | undefined): string[] {
  const text = read(page) ?? "";
  return relativeLinks(text).flatMap(({ line, target }) => {
    const [file = "", fragment] = target.split("#", 2);
    const linked = file === "" ? page : path.normalize(path.join(path.dirname(page), decodeURIComponent(file)));
    const where = `${page}:${line}: ${target}`;
    const body = read(linked);
    if (body === undefined) return [`${where}: no file ${linked}`];
    if (fragment === undefined || fragment === "") return [];
    if (!linked.endsWith(".md")) return [`${where}: an anchor into a file that is not Markdown`];
    return anchors(body).has(decodeURIComponent(fragment)) ? [] : [`${where}: ${linked} has no heading #${fragment}`];
  });
}

/** The source folders a page may cite a file of, in backticks (`test/unit/decision.test.ts`). */
const CITABLE = /`((?:test|shared|functions|bench|scripts|infra|examples)\/[^`\s]*)`/g;

/**
 * What is wrong with the files and tests `page` cites: each cited path (a glob with `*`, a
 * folder with a trailing `/`) must match a file, a bare `name.test.ts` must be a test file
 * somewhere under test/, and a test quoted right after a cited file (`` `test/x.test.ts`,
 * "its name" `` or `` (`test/x.test.ts`, "…") ``) must be in that file: each part of the
 * quote between ellipses, with runs of white space taken as one space (a page wraps lines).
 */
function brokenCitations(page: string, text: string, files: readonly string[], read: (file: string) => string | undefined): string[] {
  const problems: string[] = [];
  const matches = (cited: string): boolean => {
    if (cited.endsWith("/")) return files.some((file) => file.startsWith(cited));
    if (!cited.includes("*")) return files.includes(cited);
    const pattern = new RegExp(`^${cited.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`);
    return files.some((file) => pattern.test(file));
  };
  const lines = prose(text);
  lines.forEach((line, index) => {
    for (const [, cited] of line.matchAll(CITABLE)) if (!matches(cited!)) problems.push(`${page}:${index + 1}: no file ${cited}`);
    for (const [, name] of line.matchAll(/`([\w.-]+\.test\.ts)`/g)) {
      if (!files.some((file) => file.startsWith("test/") && path.posix.basename(file) === name)) problems.push(`${page}:${index + 1}: no test file ${name}`);
    }
  });
  const flat = lines.join("\n").replace(/\s+/g, " ");
  for (const [, cited, quoted] of flat.matchAll(/`(test\/[^`*\s]+\.ts)`\s*[,(]\s*"([^"]+)"/g)) {
    const source = read(cited!)?.replace(/\s+/g, " ");
    if (source === undefined) continue;
    for (const part of quoted!.split("…").map((piece) => piece.trim())) {
      if (part !== "" && !source.includes(part)) problems.push(`${page}: ${cited} has no test named "${part}"`);
    }
  }
  return problems;
}

/** Every file of the repository's source folders, as paths from the root with forward slashes. */
function sourceFiles(): string[] {
  return ["test", "shared", "functions", "bench", "scripts", "infra", "examples"]
    .filter((dir) => existsSync(path.join(ROOT, dir)))
    .flatMap((dir) => readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" }).map((file) => `${dir}/${file.split(path.sep).join("/")}`));
}

function readFromRepository(file: string): string | undefined {
  const full = path.join(ROOT, file);
  if (!existsSync(full)) return undefined;
  return file.endsWith(".md") ? readFileSync(full, "utf8") : "";
}

describe("relative links in README.md and docs/**/*.md", () => {
  it("GitHub's anchors: punctuation and code marks dropped, spaces to hyphens, repeats numbered", () => {
    const page = "# A\n## The store's durability assumption\n### Running `ha-module run` under systemd\n## 2. Publish the app\n```sh\n# not a heading\n```\n## Queries\n## Queries\n";
    expect([...anchors(page)]).toEqual(["a", "the-stores-durability-assumption", "running-ha-module-run-under-systemd", "2-publish-the-app", "queries", "queries-1"]);
  });

  it("finds a planted broken link: a missing file, a missing heading, a link into a missing page's heading", () => {
    const files: Record<string, string> = {
      "docs/a.md": "# A\n\n## Here\n\nSee [b](b.md), [here](#here), [gone](#gone), [c](c.md#x), [B's heading](b.md#nothing) and `[not](a-link.md)`.\n",
      "docs/b.md": "# B\n",
    };
    expect(brokenLinks("docs/a.md", (file) => files[file])).toEqual([
      "docs/a.md:5: #gone: docs/a.md has no heading #gone",
      "docs/a.md:5: c.md#x: no file docs/c.md",
      "docs/a.md:5: b.md#nothing: docs/b.md has no heading #nothing",
    ]);
  });

  it("finds a planted broken link in a page of a folder under docs/: links resolve from that folder", () => {
    const files: Record<string, string> = {
      "docs/protocol.md": "# Protocol\n\n## Sticky recovery\n\nWhy: [design](design/sticky.md#why-it-holds), [gone](design/sticky.md#gone).\n",
      "docs/design/sticky.md": "# Sticky\n\n## Why it holds\n\nThe [rule](../protocol.md#sticky-recovery), [a missing rule](../protocol.md#ride-through), [a page beside it](failover.md), [not here](protocol.md#sticky-recovery).\n",
    };
    const read = (file: string): string | undefined => files[file];
    expect(brokenLinks("docs/protocol.md", read)).toEqual(["docs/protocol.md:5: design/sticky.md#gone: docs/design/sticky.md has no heading #gone"]);
    expect(brokenLinks("docs/design/sticky.md", read)).toEqual([
      "docs/design/sticky.md:5: ../protocol.md#ride-through: docs/protocol.md has no heading #ride-through",
      "docs/design/sticky.md:5: failover.md: no file docs/design/failover.md",
      "docs/design/sticky.md:5: protocol.md#sticky-recovery: no file docs/design/protocol.md",
    ]);
  });

  it("checks the pages of folders under docs/ too", () => {
    expect(PAGES.filter((page) => path.dirname(page) !== "docs" && page !== "README.md").length).toBeGreaterThan(0);
  });

  it("has links to check: the pages link each other", () => {
    const links = PAGES.flatMap((page) => relativeLinks(readFileSync(path.join(ROOT, page), "utf8")));
    expect(links.length).toBeGreaterThan(100);
  });

  it.each(PAGES)("%s: every relative link resolves to a file and a heading", (page) => {
    expect(brokenLinks(page, readFromRepository)).toEqual([]);
  });

  it("finds a planted broken citation: a missing file, a glob that matches nothing, a bare test name nowhere, a quoted test not in its file", () => {
    const files = ["test/unit/decision.test.ts", "test/e2e/cli-run.test.ts", "shared/lease/decision.ts"];
    const sources: Record<string, string> = { "test/unit/decision.test.ts": 'it("never lowers the epoch: every takeover adds one", () => {});\nit("remembers the last 8\n  ended uuids", () => {});' };
    const page = [
      "Tested in `test/unit/decision.test.ts` (\"never lowers the epoch\"), `shared/lease/decision.ts` and `test/e2e/cli-*.test.ts`,",
      "in `test/unit/gone.test.ts`, `test/e2e/nothing-*.test.ts`, `shared/lease/` and `child-supervisor.test.ts`; see",
      "`test/unit/decision.test.ts`, \"remembers the last 8 ended uuids\" and `test/unit/decision.test.ts`, \"never lowers … renamed\".",
      "```sh\nnpx vitest run `test/unit/not-checked-in-code.test.ts`\n```",
    ].join("\n");
    expect(brokenCitations("docs/a.md", page, files, (file) => sources[file])).toEqual([
      "docs/a.md:2: no file test/unit/gone.test.ts",
      "docs/a.md:2: no file test/e2e/nothing-*.test.ts",
      "docs/a.md:2: no test file child-supervisor.test.ts",
      'docs/a.md: test/unit/decision.test.ts has no test named "renamed"',
    ]);
  });

  it.each(PAGES)("%s: every test file it cites exists, and every test it quotes after one is in that file", (page) => {
    expect(brokenCitations(page, readFileSync(path.join(ROOT, page), "utf8"), sourceFiles(), (file) => (existsSync(path.join(ROOT, file)) ? readFileSync(path.join(ROOT, file), "utf8") : undefined))).toEqual([]);
  });

  it("every docs/<page>.md#<heading> (or docs/<folder>/<page>.md#<heading>) that a source file of shared/, functions/, test/, bench/, scripts/, infra/ or examples/ cites exists", () => {
    const cited = ["shared", "functions", "test", "bench", "scripts", "infra", "examples"]
      .filter((dir) => existsSync(path.join(ROOT, dir)))
      .flatMap((dir) =>
        readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
          .filter((file) => /\.(ts|mts|mjs|js|bicep)$/.test(file))
          .flatMap((file) => {
            const text = readFileSync(path.join(ROOT, dir, file), "utf8");
            return [...text.matchAll(/\bdocs\/((?:[a-z-]+\/)*[a-z-]+\.md)#([a-z0-9-]+)/g)].map(([, page, heading]) => ({ where: path.join(dir, file), page: page!, heading: heading! }));
          }),
      );
    expect(cited.length).toBeGreaterThan(20);
    const missing = cited
      .filter(({ where }) => where !== path.join("test", "unit", "doc-links.test.ts"))
      .filter(({ page, heading }) => !anchors(readFromRepository(path.join("docs", page)) ?? "").has(heading))
      .map(({ where, page, heading }) => `${where}: docs/${page}#${heading}`);
    expect(missing).toEqual([]);
  });
});
