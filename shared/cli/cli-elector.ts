import { PrimaryElector } from "../sdk/primary-elector.js";
import type { ClientSettings } from "./client-flags.js";
import { UsageError } from "./usage.js";

/** Option mistakes the SDK finds (a bad --endpoint or --address) are usage errors here. */
export function asUsageError<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
}

/** The elector of `elect` and `run`, from the shared client flags and --address. */
export function createCliElector(utype: string, client: ClientSettings, address: string | boolean | undefined): PrimaryElector {
  return asUsageError(
    () =>
      new PrimaryElector({
        utype,
        endpoint: client.endpoint,
        ...(client.apiKey === undefined ? {} : { apiKey: client.apiKey }),
        ...(typeof address === "string" ? { address } : {}),
      }),
  );
}
