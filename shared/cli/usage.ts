import type { CommandSpec, OptionSpec } from "./command-spec.js";
import { EXIT_CODE_HELP } from "./exit-codes.js";

/** `ha-module --help`: every command with its one-line summary, then the exit codes. */
export function renderUsage(commands: readonly CommandSpec[]): string {
  const rows = commands.map((command) => [`${command.name} ${command.synopsis}`.trim(), command.summary] as const);
  return [
    "Usage: ha-module <command> [options]",
    "",
    "Commands:",
    ...columns(rows),
    "",
    "`ha-module <command> --help` shows what a command does and every option it takes;",
    "`ha-module --version` prints the version.",
    "",
    "Exit codes:",
    ...columns(EXIT_CODE_HELP.map(([code, meaning]) => [String(code), meaning] as const)),
    "",
  ].join("\n");
}

/** `ha-module <command> --help`: its usage line, what it does, and its options. */
export function renderCommandHelp(command: CommandSpec): string {
  const options: OptionSpec[] = [...command.options, { name: "help", help: "show this help" }];
  return [
    `Usage: ha-module ${command.name} ${command.synopsis}`.trimEnd(),
    "",
    ...(command.details === undefined ? [command.summary] : command.details.split("\n")),
    "",
    "Options:",
    ...columns(options.map((option) => [`--${option.name}${option.value === undefined ? "" : ` ${option.value}`}`, option.help] as const)),
    "",
  ].join("\n");
}

/** What a usage error ends with: the command's usage line, and where its options are. */
export function renderUsageLine(command: CommandSpec): string {
  return `Usage: ha-module ${command.name} ${command.synopsis}`.trimEnd() + `\n(\`ha-module ${command.name} --help\` lists its options.)\n`;
}

/** Two aligned columns; a "\n" in the second continues it, aligned, on the next line. */
function columns(rows: ReadonlyArray<readonly [string, string]>): string[] {
  const width = Math.max(...rows.map(([left]) => left.length)) + 3;
  return rows.flatMap(([left, right]) => right.split("\n").map((line, index) => `  ${(index === 0 ? left : "").padEnd(width)}${line}`.trimEnd()));
}
