import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

/** The built CLI; `npm test` builds before vitest runs. */
export const CLI_PATH = fileURLToPath(new URL("../../dist/shared/cli/main.js", import.meta.url));

export interface ServiceProcess {
  /** The API base URL, e.g. http://127.0.0.1:41631/api */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr), for failure messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs `ha-module serve` (what `npm start` runs) as a real child process on a free port
 * with an in-memory embedded store, and waits for the line that names its URL.
 */
export async function startServiceProcess(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [CLI_PATH, "serve"], {
    env: { ...process.env, PORT: "0", HA_IN_MEMORY: "true", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start within 30 s:\n${output}`)), 30_000);
    const check = (): void => {
      const found = /listening on (http:\/\/\S+\/api)/.exec(output);
      if (found?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    };
    child.stdout?.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      const [code] = (await exited) as [number | null];
      clearTimeout(killer);
      return code;
    },
  };
}

/**
 * Runs `ha-module serve` expecting it to stop on its own (a refused start): resolves with
 * its exit code and output, or rejects when it is still running after `timeoutMs`.
 */
export async function runServiceToExit(
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [CLI_PATH, "serve"], {
    env: { ...process.env, PORT: "0", HA_IN_MEMORY: "true", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  if (signal === "SIGKILL") throw new Error(`service was still running after ${timeoutMs} ms:\n${output}`);
  return { code, output };
}
