import { hostname } from "node:os";
import { PrimaryElector } from "../sdk/primary-elector.js";
import type { ClientSettings } from "./client-flags.js";
import type { OptionSpec } from "./command-spec.js";
import { UsageError } from "./usage.js";

/** Options `elect` and `run` share, besides the client's. */
export const CANDIDATE_OPTIONS: readonly OptionSpec[] = [
  { name: "address", value: "A", help: "where this participant can be reached, shown to everyone by GetPrimary\n(default: this host's name)" },
  {
    name: "timeout",
    value: "D",
    help: "give up (exit 4) unless elected within D (500ms, 10s, 2m); 0 tries once:\ngive up as soon as another live primary is seen",
  },
  {
    name: "exit-on-auth-error",
    help: "exit 1 on a 401 (wrong key) or 404 (wrong endpoint) answer; without it, such an\nanswer is reported once and retried, backing off, until it changes",
  },
];

/** Option mistakes the SDK finds (a bad --endpoint or --address) are usage errors here. */
export function asUsageError<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The elector of `elect` and `run`, from the shared client flags and --address; without
 * --address, the host's name (as the SDK's example does), so that GetPrimary never shows a
 * primary nobody can find. Both announce themselves as standbys (docs/protocol.md#standbys), so
 * an operator sees them and can name one in `ha-module handover --to`.
 */
export function createCliElector(utype: string, client: ClientSettings, address: string | boolean | undefined): PrimaryElector {
  return asUsageError(
    () =>
      new PrimaryElector({
        utype,
        endpoint: client.endpoint,
        ...(client.apiKey === undefined ? {} : { apiKey: client.apiKey }),
        address: typeof address === "string" ? address : hostname(),
        announce: true,
      }),
  );
}
