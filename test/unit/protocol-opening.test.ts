import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * docs/protocol.md opens with what is guaranteed, what is assumed and what is not, on one
 * screen: a reader who asks what ha-module promises finds it without reading the rules.
 * Each item there links on to where it is stated in full (doc-links checks that the links
 * resolve), so the opening can stay short without a promise losing its rule or its tests.
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const SCREEN = 60;
const PARTS = ["**Guaranteed**", "**Assumed**", "**Not guaranteed**"];

/** What is wrong with the opening of `page`: its length, its three parts, an item without a link. */
function openingProblems(page: string): string[] {
  const lines = page.split("\n");
  const start = lines.findIndex((line) => line === "## At a glance");
  if (start === -1) return ["no ## At a glance"];
  const after = lines.findIndex((line, index) => index > start && /^#{1,2} /.test(line));
  const end = after === -1 ? lines.length : after;
  const problems: string[] = [];
  if (end > SCREEN) problems.push(`the opening runs to line ${end}, past one screen (${SCREEN} lines)`);
  const opening = lines.slice(start + 1, end);
  for (const part of PARTS) if (!opening.some((line) => line.startsWith(part))) problems.push(`no ${part} part`);
  const items: Array<{ line: number; text: string }> = [];
  opening.forEach((line, index) => {
    if (/^(- |\d+\. )/.test(line)) items.push({ line: start + 2 + index, text: line });
    else if (/^\s+\S/.test(line) && items.length > 0) items[items.length - 1]!.text += ` ${line.trim()}`;
  });
  if (items.length === 0) problems.push("no items");
  for (const item of items) if (!/\]\((?![a-z]+:)[^)\s]+\)/.test(item.text)) problems.push(`line ${item.line}: no link to where it is stated: ${item.text.slice(0, 60)}`);
  return problems;
}

describe("docs/protocol.md's opening", () => {
  it("finds a planted fault: an opening past one screen, a part missing, an item that links nowhere", () => {
    const long = ["# P", "", "## At a glance", "", "**Guaranteed**", "", "- one ([a](#a))", ...Array.from({ length: 60 }, () => "text"), "**Assumed**", "", "1. two", "   wrapped ([b](#b))", "## Words"].join("\n");
    expect(openingProblems(long)).toEqual(["the opening runs to line 71, past one screen (60 lines)", "no **Not guaranteed** part"]);
    const unlinked = ["# P", "## At a glance", "**Guaranteed**", "- linked ([a](#a))", "**Assumed**", "1. only an [outside](https://example.com) link", "**Not guaranteed**", "- plain words", "  across two lines", "## Words"].join("\n");
    expect(openingProblems(unlinked)).toEqual(["line 6: no link to where it is stated: 1. only an [outside](https://example.com) link", "line 8: no link to where it is stated: - plain words across two lines"]);
    expect(openingProblems("# P\n## Words\n")).toEqual(["no ## At a glance"]);
  });

  it("is one screen of guarantees, assumptions and what is not guaranteed, each linking to its rule", () => {
    expect(openingProblems(readFileSync(path.join(ROOT, "docs", "protocol.md"), "utf8"))).toEqual([]);
  });
});
