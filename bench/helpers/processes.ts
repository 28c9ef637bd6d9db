import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

export interface Line {
  readonly event: string;
  /** performance.now() in the bench when the line arrived. */
  readonly arrivedAt: number;
  readonly [field: string]: unknown;
}

/** A child whose stdout is read as JSON lines. */
export interface LineProcess {
  readonly child: ChildProcess;
  readonly lines: Line[];
  onLine(listener: (line: Line) => void): void;
  waitFor(match: (line: Line) => boolean, timeoutMs: number): Promise<Line>;
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** `nodeArgs` go to node before the script (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
export function startLineProcess(script: string, args: string[], env: Record<string, string> = {}, nodeArgs: readonly string[] = []): LineProcess {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  const lines: Line[] = [];
  const listeners: ((line: Line) => void)[] = [];
  let output = "";
  let rest = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-20_000);
    const parts = (rest + text).split("\n");
    rest = parts.pop() ?? "";
    for (const part of parts) {
      let parsed: { event?: unknown };
      try {
        parsed = JSON.parse(part) as { event?: unknown };
      } catch {
        continue; // a banner, not an event
      }
      if (typeof parsed !== "object" || parsed === null) continue;
      const line = { ...parsed, event: String(parsed.event ?? ""), arrivedAt: performance.now() } as Line;
      lines.push(line);
      listeners.forEach((listener) => listener(line));
    }
  });
  child.stderr!.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  child.stdin!.on("error", () => {
    // the child died; its stdin is gone
  });
  return {
    child,
    lines,
    onLine: (listener) => listeners.push(listener),
    output: () => output,
    waitFor: (match, timeoutMs) =>
      new Promise((resolve, reject) => {
        const found = lines.find(match);
        if (found !== undefined) return resolve(found);
        const timer = setTimeout(() => reject(new Error(`no matching line within ${timeoutMs} ms from ${script} ${args.join(" ")}:\n${output}`)), timeoutMs);
        listeners.push((line) => {
          if (!match(line)) return;
          clearTimeout(timer);
          resolve(line);
        });
      }),
    kill: async (signal) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill(signal);
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** `ha-module serve` as a child process; resolves with its API URL once it listens. */
export async function startService(cli: string, env: Record<string, string>, nodeArgs: readonly string[] = []): Promise<{ url: string; process: LineProcess }> {
  const service = startLineProcess(cli, ["serve"], { PORT: "0", ...env }, nodeArgs);
  const started = performance.now();
  for (;;) {
    const found = /listening on (http:\/\/\S+\/api)/.exec(service.output());
    if (found?.[1] !== undefined) return { url: found[1], process: service };
    if (service.child.exitCode !== null || performance.now() - started > 30_000) throw new Error(`service did not start:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** CPU seconds a process has used so far (user + system), from /proc; undefined off Linux. */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat(5), counted after the command name: utime, stime in clock ticks (100/s on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
