import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { EXIT } from "../exit-codes.js";

/** Why a command cannot be run, with the exit code a shell would give (126 or 127). */
export interface CommandProblem {
  readonly exitCode: typeof EXIT.cannotExecute | typeof EXIT.commandNotFound;
  readonly message: string;
}

/**
 * Looks the command up as execvp will when `run` starts it: a name with a slash is that
 * file (relative to `cwd`), any other name is searched on PATH. `run` asks before it
 * competes, so that a typo costs nothing instead of an election and an epoch per try.
 * Undefined when the command can be started (it may still be removed before then; the
 * start reports that the same way).
 */
export function findCommandProblem(command: string, env: NodeJS.ProcessEnv, cwd = process.cwd()): CommandProblem | undefined {
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    const problem = executableProblem(path);
    if (problem === "missing") return { exitCode: EXIT.commandNotFound, message: `${command}: no such file.` };
    if (problem !== undefined) return { exitCode: EXIT.cannotExecute, message: `${command}: ${problem}.` };
    return undefined;
  }
  // Like execvp: an empty PATH entry is the current directory; without PATH, the default.
  const directories = (env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(delimiter).map((dir) => (dir === "" ? cwd : dir));
  let found: string | undefined;
  for (const dir of directories) {
    const path = join(dir, command);
    const problem = executableProblem(path);
    if (problem === undefined) return undefined;
    if (problem !== "missing") found ??= `${path}: ${problem}`;
  }
  if (found !== undefined) return { exitCode: EXIT.cannotExecute, message: `${found}.` };
  return { exitCode: EXIT.commandNotFound, message: `${command}: command not found on PATH.` };
}

/** Undefined when `path` is an executable file; else "missing" or what is wrong with it. */
function executableProblem(path: string): "missing" | string | undefined {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    return "missing";
  }
  if (isDirectory) return "is a directory";
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return "permission denied (not executable)";
  }
  return undefined;
}
