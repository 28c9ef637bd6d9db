import { parseArgs, type ParseArgsConfig } from "node:util";

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
