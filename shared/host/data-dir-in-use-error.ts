/** Who holds a data directory, as the holder itself reports it. */
export interface DataDirHolder {
  readonly pid: number;
  /** When it took the lock (ISO-8601 UTC). */
  readonly since: string;
}

/**
 * Another running service holds HA_DATA_DIR. Two services on one directory would each
 * keep their own copy of the leases and grant the same role twice. Like a ConfigError,
 * the message names the setting and says what to change.
 */
export class DataDirInUseError extends Error {
  override readonly name = "DataDirInUseError";
  readonly setting = "HA_DATA_DIR";

  constructor(
    readonly dataDir: string,
    readonly holder: DataDirHolder | undefined,
  ) {
    const who = holder === undefined ? "another process that did not say who it is" : `another ha-module serve (pid ${holder.pid}, since ${holder.since})`;
    super(
      `HA_DATA_DIR ${dataDir} is in use by ${who}. Two services on one data directory would grant the same lease twice. Stop that service, or give this one another HA_DATA_DIR (or HA_IN_MEMORY=true to keep nothing on disk).`,
    );
  }
}
