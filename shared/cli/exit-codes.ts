/**
 * The exit codes of every `ha-module` command, defined once so that scripts can test them
 * (`if ha-module primary scheduler >/dev/null; then …`). `ha-module --help` and docs/cli.md
 * print this table.
 */
export const EXIT = {
  /** Done; `primary <utype>`: the role has a live primary. */
  ok: 0,
  /** The service refused the call or could not be reached; the message says why. */
  failure: 1,
  /** A wrong flag, argument or setting: nothing was done. */
  usage: 2,
  /** `primary <utype>` and `release`: the role has no live primary. */
  noPrimary: 3,
  /** `elect` and `run` with --timeout: not elected in time. */
  timedOut: 4,
  /** `run`: the command exists but cannot be executed (EACCES), as shells say. */
  cannotExecute: 126,
  /** `run`: the command was not found, as shells say. */
  commandNotFound: 127,
} as const;

/** The table of `ha-module --help`, in code order. */
export const EXIT_CODE_HELP: ReadonlyArray<readonly [code: number, meaning: string]> = [
  [EXIT.ok, "success; primary <utype>: the role has a live primary"],
  [EXIT.failure, "failure: the service refused or could not be reached (a 401 or 404 comes with a hint)"],
  [EXIT.usage, "usage: a wrong flag, argument or setting; nothing was done"],
  [EXIT.noPrimary, "primary <utype>, release, handover: the role has no live primary (the JSON is still printed)"],
  [EXIT.timedOut, "elect, run --timeout: not elected in time"],
  [EXIT.cannotExecute, "run: the command is not executable"],
  [EXIT.commandNotFound, "run: the command was not found"],
];
