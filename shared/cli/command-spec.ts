import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./usage-error.js";

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
    throw new UsageError(describeParseError(error, spec));
  }
  return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals, trailing };
}

/**
 * parseArgs's own words, except for an unknown option: its message ends in a broken quote
 * and suggests nothing. Ours names the option and, when one is near (a typo), the option
 * meant; for `run`, an option meant for the command goes after `--`.
 */
function describeParseError(error: unknown, spec: CommandSpec): string {
  const message = error instanceof Error ? error.message : String(error);
  const unknown = (error as { code?: unknown }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /^Unknown option '([^']+)'/.exec(message)?.[1] : undefined;
  if (unknown === undefined) return message;
  const names = [...spec.options.map((option) => `--${option.name}`), "--help"];
  const meant = closest(unknown.split("=")[0]!, names);
  if (meant !== undefined) return `Unknown option '${unknown}'. Did you mean ${meant}?`;
  return `Unknown option '${unknown}'.` + (spec.trailing === true ? ` An option for the command goes after --: ha-module ${spec.name} <utype> -- <command> ${unknown}` : "");
}

/** The name `word` begins (the only one), or the nearest by edit distance if it is near enough to be a typo of it. */
export function closest(word: string, names: readonly string[]): string | undefined {
  const extended = word.length >= 4 ? names.filter((name) => name.startsWith(word)) : [];
  if (extended.length === 1) return extended[0];
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(word, name);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  // A third of the name's letters (at least 1, at most 3), as git's and npm's suggestions allow.
  const allowed = best === undefined ? 0 : Math.min(3, Math.max(1, Math.floor(best.name.replace(/^-+/, "").length / 3)));
  return best !== undefined && best.distance <= allowed ? best.name : undefined;
}

/** Edit distance: insertions, deletions, substitutions and swaps of two neighbours, each 1 (optimal string alignment). */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      let distance = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, before[j - 2]! + 1);
      current[j] = distance;
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
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
