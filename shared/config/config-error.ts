/** A setting is missing or wrong. The message names the setting and says what to change. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";

  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
  }
}
