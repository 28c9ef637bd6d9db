import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The SDK entry (`ha-module/sdk`) must load where none of the Azure packages is installed:
 * the fenced writers take the user's own clients by their shape, never by an import.
 */
describe("the SDK entry at run time", () => {
  let dir: string;
  let imports: string[];
  let bundle: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ha-sdk-entry-"));
    bundle = path.join(dir, "sdk.mjs");
    const result = await build({
      entryPoints: [path.join(ROOT, "shared/sdk/index.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      packages: "external",
      outfile: bundle,
      metafile: true,
      logLevel: "silent",
    });
    imports = Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((found) => found.external).map((found) => found.path));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("imports nothing but Node's own modules (type-only imports are erased)", () => {
    expect(imports.filter((name) => !name.startsWith("node:"))).toEqual([]);
  });

  it("loads, fenced writers included, in a Node that refuses every @azure package", async () => {
    const refuse = path.join(dir, "refuse-azure.mjs");
    await writeFile(
      path.join(dir, "refuse-azure-hooks.mjs"),
      [
        "export async function resolve(specifier, context, next) {",
        "  if (specifier.startsWith('@azure/')) throw new Error('the SDK imported ' + specifier);",
        "  return next(specifier, context);",
        "}",
      ].join("\n"),
    );
    await writeFile(refuse, "import { register } from 'node:module';\nregister('./refuse-azure-hooks.mjs', import.meta.url);\n");
    const probe = `const sdk = await import(${JSON.stringify(bundle)}); console.log(JSON.stringify(["fencedTableEntity", "fencedBlob", "fencedCosmosItem", "FencedOutError", "PrimaryElector"].map((name) => typeof sdk[name])));`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", refuse, "--input-type=module", "--eval", probe]);
    expect(JSON.parse(stdout)).toEqual(["function", "function", "function", "function", "function"]);
  });
});
