import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./usage.js";

/** One option of a command, declared once: the parser and `--help` both read it. */
export interface OptionSpec {
  readonly name: string;
  /** The value's placeholder in the help ("URL"); absent for a flag that takes no value. */
  readonly value?: string;
  /** Its help text; "\n" continues it on the next line. */
  readonly help: string;
}

/** A command of the `ha-module` binary, as `--help` shows it and the parser reads it. */
export interface CommandSpec {
  readonly name: string;
  /** What follows the name in the usage line: "<utype> [options]". */
  readonly synopsis: string;
  /** One line for the command list of `ha-module --help`. */
  readonly summary: string;
  /** What `ha-module <command> --help` says about it, after the usage line. */
  readonly details?: string;
  /** Every option it takes: nothing else is accepted, and nothing else is listed. */
  readonly options: readonly OptionSpec[];
  /** True when a command to run follows `--` (run). */
  readonly trailing?: boolean;
}

/** A command's arguments, parsed against its spec. */
export interface CommandLine {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
  /** What followed `--`, for a spec with `trailing`; empty otherwise. */
  readonly trailing: readonly string[];
}

const HELP_FLAGS = new Set(["--help", "-h"]);

/**
 * Parses `args` strictly against `spec` (an unknown option is a UsageError), or answers
 * "help" when --help or -h comes before any `--`, whatever else is wrong.
 */
export function parseCommandLine(spec: CommandSpec, args: readonly string[]): CommandLine | "help" {
  const separator = args.indexOf("--");
  const own = spec.trailing === true && separator !== -1 ? args.slice(0, separator) : [...args];
  const trailing = spec.trailing === true && separator !== -1 ? args.slice(separator + 1) : [];
  const beforeEnd = own.indexOf("--") === -1 ? own : own.slice(0, own.indexOf("--"));
  if (beforeEnd.some((arg) => HELP_FLAGS.has(arg))) return "help";
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const option of spec.options) options[option.name] = { type: option.value === undefined ? "boolean" : "string" };
  let parsed;
  try {
    parsed = parseArgs({ args: joinNegativeValues(own, spec), options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals, trailing };
}

/**
 * `--check-port -1` would make parseArgs complain that the value is "ambiguous"; a value
 * that looks like a negative number is taken as the option's value instead, so that the
 * option's own check can say what is wrong with it.
 */
function joinNegativeValues(args: readonly string[], spec: CommandSpec): string[] {
  const takesValue = new Set(spec.options.filter((option) => option.value !== undefined).map((option) => `--${option.name}`));
  const joined: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (takesValue.has(arg) && next !== undefined && /^-[0-9.]/.test(next)) {
      joined.push(`${arg}=${next}`);
      i += 1;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}
