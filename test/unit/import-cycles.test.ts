import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * No import circle in the source tree, type-only imports included: a file that its own
 * imports lead back to cannot be read, tested or moved on its own, and the layering of
 * docs/layout.md says nothing about circles within one folder. The check is Tarjan's
 * strongly connected components over the relative imports of every .ts file, and it is
 * shown to find a planted circle.
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const SOURCE_FOLDERS = ["shared", "functions", "bench", "scripts"];
const IMPORT = /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*["'](\.\.?\/[^"']+)["']|^\s*import\s*["'](\.\.?\/[^"']+)["']/gm;

type Graph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.ts$/.test(entry.name) && !entry.name.endsWith(".d.ts"))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

function importGraph(files: readonly string[], read: (file: string) => string): Graph {
  const known = new Set(files);
  return new Map(
    files.map((file) => {
      const targets = [...read(file).matchAll(IMPORT)]
        .map((match) => path.join(path.dirname(file), (match[1] ?? match[2])!).replace(/\.js$/, ".ts"))
        .filter((target) => known.has(target));
      return [file, targets];
    }),
  );
}

/** Every strongly connected component of more than one file, or of one file importing itself. */
export function importCircles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = member === file ? undefined : stack.pop()) {
      onStack.delete(member);
      component.push(member);
    }
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

describe("import circles", () => {
  it("the source tree has none, type-only imports included", () => {
    const files = SOURCE_FOLDERS.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(200);
    const graph = importGraph(files, (file) => readFileSync(path.join(ROOT, file), "utf8"));
    expect(importCircles(graph)).toEqual([]);
  });

  it("finds a planted circle through a type-only import, and reads re-exports and side-effect imports", () => {
    const sources: Record<string, string> = {
      "a/one.ts": 'import { two } from "./two.js";\n',
      "a/two.ts": 'export { three } from "../b/three.js";\n',
      "b/three.ts": 'import type { One } from "../a/one.js";\nimport "./four.js";\n',
      "b/four.ts": "export const four = 4;\n",
    };
    const graph = importGraph(Object.keys(sources), (file) => sources[file]!);
    expect(graph.get("b/three.ts")).toEqual(["a/one.ts", "b/four.ts"]);
    expect(importCircles(graph)).toEqual([["a/one.ts", "a/two.ts", "b/three.ts"]]);
  });
});
