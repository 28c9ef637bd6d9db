import { parseArgs, type ParseArgsConfig } from "node:util";
import { parseDuration } from "../../shared/cli/client-flags.js";

type Options = NonNullable<ParseArgsConfig["options"]>;
const HELP = { help: { type: "boolean", short: "h" } } as const;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ options: O & typeof HELP; allowPositionals: boolean; strict: true }>>;

/**
 * A benchmark's command line, read with node:util's parseArgs (strict): `--help` prints
 * `usage` and exits 0; an unknown or malformed option prints what is wrong and the usage
 * and exits 2. So every benchmark answers `npm run bench -- <name> --help` alike.
 */
export function readArgs<const O extends Options>(usage: string, options: O, { allowPositionals = false, args = process.argv.slice(2) }: { allowPositionals?: boolean; args?: string[] } = {}): Parsed<O> {
  if (args.some((arg) => arg === "--help" || arg === "-h")) {
    process.stdout.write(usage.endsWith("\n") ? usage : `${usage}\n`);
    process.exit(0);
  }
  try {
    return parseArgs({ args, options: { ...options, ...HELP }, allowPositionals, strict: true });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${usage}\n`);
    process.exit(2);
  }
}

/** A bench flag that must be a positive integer, e.g. `--rounds 5`; a clear error naming the flag otherwise. */
export function positiveFlag(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer (got ${JSON.stringify(text)}).`);
  return value;
}

/**
 * Readers of a benchmark's parsed options that print what is wrong and the usage and exit 2:
 * `whole` (an integer option of at least `min`, or `fallback` when not given) and
 * `duration` (the CLI's durations: `90s`, `1m30s`, `500ms`).
 */
export function optionReaders(usage: string, values: Readonly<Record<string, unknown>>) {
  const usageError = (message: string): never => {
    process.stderr.write(`${message}\n\n${usage}\n`);
    process.exit(2);
  };
  const whole = (name: string, fallback: number, min = 1): number => {
    const text = values[name];
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < min) usageError(`--${name} must be a whole number of at least ${min}, got ${JSON.stringify(text)}.`);
    return value;
  };
  const duration = (name: string, text: string): number => {
    try {
      return parseDuration(name, text) ?? 0;
    } catch (error) {
      return usageError(error instanceof Error ? error.message : String(error));
    }
  };
  return { usageError, whole, duration };
}
