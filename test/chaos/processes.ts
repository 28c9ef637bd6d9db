import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync, readdirSync, writeSync } from "node:fs";

/** A process the chaos harness started, with its output in a file and the last few KiB in memory. */
export interface LoggedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  /** True until it has exited (a stopped process is running). */
  running(): boolean;
  /** The end of what it printed, for error messages. */
  tail(): string;
  /** Sends `signal` while it has not exited; only our own unreaped child, so its pid cannot have been reused. */
  signal(signal: NodeJS.Signals): void;
  /** The harness is about to end it: its exit is not a crash. */
  expectExit(): void;
}

export interface StartOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Where stdout and stderr go (appended). */
  readonly outFile: string;
  /** A new process group led by the child, so that its group can be signalled apart from ours. */
  readonly detached?: boolean;
  /** Called with each stdout line; stdout is then also copied to `outFile`. */
  readonly onLine?: (line: string) => void;
  /** Called when it exits without expectExit() first: it crashed, or stopped on its own. */
  readonly onUnexpectedExit?: (process: LoggedProcess, exit: { code: number | null; signal: NodeJS.Signals | null }) => void;
}

const TAIL_BYTES = 8192;

export function startLogged(name: string, command: string, args: readonly string[], options: StartOptions): LoggedProcess {
  const fd = openSync(options.outFile, "a");
  const child = spawn(command, args, { env: options.env, detached: options.detached ?? false, stdio: ["ignore", "pipe", fd] });
  let tail = "";
  let rest = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    const text = chunk.toString();
    try {
      writeSync(fd, text);
    } catch {
      // the file is closed once the process exited; the tail still has it
    }
    tail = (tail + text).slice(-TAIL_BYTES);
    const lines = (rest + text).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) options.onLine?.(line);
  });
  let ended = false;
  let expected = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      ended = true;
      resolve({ code, signal });
    });
    child.once("error", (error) => {
      if (child.pid !== undefined) return;
      ended = true;
      tail += `\n[could not start: ${error.message}]`;
      resolve({ code: null, signal: null });
    });
  });
  // stdout may still be draining after "exit": close the file only once it ended.
  child.stdout!.once("close", () => void exited.then(() => closeSync(fd)));
  const handle: LoggedProcess = {
    name,
    child,
    pid: child.pid ?? -1,
    exited,
    running: () => !ended,
    tail: () => `${tail}${readTail(options.outFile)}`,
    signal: (signal) => {
      if (!ended) child.kill(signal);
    },
    expectExit: () => {
      expected = true;
    },
  };
  void exited.then((exit) => {
    if (!expected) options.onUnexpectedExit?.(handle, exit);
  });
  return handle;
}

/** The end of a file (stderr goes straight to it). */
function readTail(file: string): string {
  try {
    const text = readFileSync(file, "utf8");
    return text.length > TAIL_BYTES ? `\n…${text.slice(-TAIL_BYTES)}` : `\n${text}`;
  } catch {
    return "";
  }
}

/**
 * Whether `pid` exists, can still run code (not a zombie) and its parent is `parentPid`.
 * The harness signals a process it did not start itself (the leader of a command's group)
 * only after this check, so a pid reused by someone else's process is never signalled.
 */
export function isLiveChildOf(pid: number, parentPid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.ppid === parentPid && stat.state !== "Z" && stat.state !== "X";
}

/** Whether `pid` can still run code (exists and is not a zombie). */
export function isRunning(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== "Z" && stat.state !== "X";
}

/** The command line of `pid`, or undefined once it is gone. */
export function commandLineOf(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((part) => part !== "");
  } catch {
    return undefined;
  }
}

function readStat(pid: number): { state: string; ppid: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses.
  const [state = "", ppid = ""] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, ppid: Number(ppid) };
}

/** kill(2) that treats "no such process" as done. */
export function sendSignal(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/** The harness's environment for its children, without any HA_ setting that could leak in from the caller's shell. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("HA_")) env[key] = value;
  return { ...env, ...extra };
}

/** Single-quoted for sh. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * `root` and every process below it, parents before children, from /proc (Linux). A server
 * that puts its children in sessions of their own (PostgreSQL's backends) is reached this
 * way when signalling a process group is not enough.
 */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [root];
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat === undefined) continue; // gone meanwhile
    const siblings = children.get(stat.ppid);
    if (siblings === undefined) children.set(stat.ppid, [Number(entry)]);
    else siblings.push(Number(entry));
  }
  const found = [root];
  for (let i = 0; i < found.length; i += 1) for (const child of children.get(found[i]!) ?? []) if (!found.includes(child)) found.push(child);
  return found;
}

/** How long a process asked to stop (SIGTERM) may take before it gets SIGKILL. */
export const STOP_TIMEOUT_MS = 15_000;

/** SIGCONT and SIGKILL to a process the harness is about to end, resolved once it exited. */
export async function killAndWait(child: LoggedProcess): Promise<void> {
  child.expectExit();
  child.signal("SIGCONT");
  child.signal("SIGKILL");
  await child.exited;
}

/** SIGCONT and SIGTERM, then SIGKILL after STOP_TIMEOUT_MS; resolved once it exited. */
export async function stopAndWait(child: LoggedProcess): Promise<void> {
  child.expectExit();
  child.signal("SIGCONT");
  child.signal("SIGTERM");
  const timer = setTimeout(() => child.signal("SIGKILL"), STOP_TIMEOUT_MS);
  await child.exited;
  clearTimeout(timer);
}
