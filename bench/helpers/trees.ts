/**
 * What the side-by-side benchmarks share: `--tree [LABEL=]DIR` arguments (another build's
 * checkout, measured in the same run as this one), and one way to start a tree's
 * `ha-module serve` on the in-memory embedded Azurite: a child killed when this process
 * exits, resolved with its API URL once the banner names it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

export interface Tree {
  /** What tables and plots call it. */
  readonly label: string;
  /** The checkout, built (its dist/ is what runs). */
  readonly dir: string;
}

const children = new Set<ChildProcess>();
process.on("exit", () => children.forEach((child) => child.kill("SIGKILL")));

/** Starts `dir`'s built serve (dist/); `nodeArgs` go to its node (e.g. --cpu-prof), `env` to its environment (e.g. HA_TIMEOUT_MS). */
export async function startServe(dir: string, nodeArgs: readonly string[] = [], env: Readonly<Record<string, string>> = {}): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...nodeArgs, path.join(dir, "dist/shared/cli/main.js"), "serve"], {
    env: { ...process.env, PORT: "0", HA_IN_MEMORY: "true", HA_DATA_DIR: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const look = (chunk: Buffer): void => {
      out += chunk.toString();
      const found = /http:\/\/127\.0\.0\.1:\d+\/api/.exec(out);
      if (found) resolve(found[0]);
    };
    child.stdout.on("data", look);
    child.stderr.on("data", look);
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  return { url, child };
}

/** `--tree LABEL=DIR` names a tree in tables and plots; a bare DIR is its own label. */
export function treesOf(given: readonly string[]): Tree[] {
  return given.map((tree) => {
    const at = tree.indexOf("=");
    return at < 0 ? { label: tree, dir: path.resolve(tree) } : { label: tree.slice(0, at), dir: path.resolve(tree.slice(at + 1)) };
  });
}
