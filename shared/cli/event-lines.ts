import { PrimaryElector } from "../sdk/primary-elector.js";
import type { ClientSettings } from "./client-flags.js";
import { UsageError } from "./usage.js";

/** Writes one JSON object per line to stdout, stamped with the wall-clock time. */
export function printEvent(event: string, fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ event, ...fields, at: new Date().toISOString() })}\n`);
}

/**
 * The elector's events as JSON lines on stdout:
 *   {"event":"elected","utype":…,"uuid":…,"epoch":…,"at":"<ISO>"}
 *   {"event":"demoted","utype":…,"uuid":…,"epoch":…,"reason":…,"at":…}
 *   {"event":"primaryChanged","utype":…,"primary":{…}|null,"at":…}
 * Non-fatal errors go to stderr as text, so that stdout stays machine-readable.
 */
export function printElectorEvents(elector: PrimaryElector, command: string): void {
  const utype = elector.utype;
  elector.on("elected", ({ uuid, epoch }) => printEvent("elected", { utype, uuid, epoch }));
  elector.on("demoted", ({ uuid, epoch, reason }) => printEvent("demoted", { utype, uuid, epoch, reason }));
  elector.on("primaryChanged", ({ primary }) => printEvent("primaryChanged", { utype, primary }));
  elector.on("error", (error) => process.stderr.write(`ha-module ${command}: ${error.message}\n`));
}

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

/** Resolves on the first SIGTERM or SIGINT. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
