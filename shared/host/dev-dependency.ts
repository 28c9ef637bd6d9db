import { ConfigError } from "../config/config-error.js";

/**
 * Loads what an embedded store needs from a dev dependency of ha-module: a clone has it after
 * `npm install`, a project that installed ha-module does not. When the package is missing,
 * throws a ConfigError for `setting` with `missing`, which says what to install or which
 * setting avoids it; any other load error is thrown as it is.
 */
export function loadDevDependency<T>(load: () => T, setting: string, missing: string): T {
  try {
    return load();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw error;
    throw new ConfigError(setting, missing);
  }
}
