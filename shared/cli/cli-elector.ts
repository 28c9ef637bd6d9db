import { hostname } from "node:os";
import { checkId } from "../sdk/loop/option-checks.js";
import { PrimaryElector } from "../sdk/election/primary-elector.js";
import { clientOf, type ClientSettings } from "./client-flags.js";
import type { OptionSpec } from "./command-spec.js";
import { UsageError } from "./usage-error.js";

/** Options `elect` and `run` share, besides the client's. */
export const CANDIDATE_OPTIONS: readonly OptionSpec[] = [
  { name: "address", value: "A", help: "where this participant can be reached, shown to everyone by GetPrimary\n(default: this host's name)" },
  {
    name: "timeout",
    value: "D",
    help: "give up (exit 4) unless elected within D (500ms, 10s, 1m30s); 0 tries once:\ngive up as soon as another live primary is seen",
  },
  {
    name: "member",
    value: "NAME",
    help: "also be NAME, a member of the group, and watch the group (the lines of join and\nmembers --watch); the role, the member heartbeat and the watch go in one request per I",
  },
  { name: "group", value: "G", help: "the group --member joins and watches (default: <utype>)" },
  {
    name: "exit-on-auth-error",
    help: "exit 1 on a 401 (wrong key or token), 403 (no grant) or 404 (wrong endpoint) answer;\nwithout it, such an answer is reported once and retried, backing off, until it changes",
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
 * The elector of `elect` and `run`, from the shared client flags, --address, --member and
 * --group; without --address, the host's name (as the SDK's example does), so that GetPrimary
 * never shows a primary nobody can find. Both announce themselves as standbys
 * (docs/protocol.md#standbys), so an operator sees them and can name one in `ha-module handover --to`.
 * --member makes the participant a member of --group (the utype by default) that watches it,
 * through the elector's `membership`: one HaClient, so its calls batch (docs/sdk.md#one-request-per-participant).
 * `rideThroughMs`: `run --ride-through` (docs/protocol.md#ride-through); 0 for `elect`.
 */
export function createCliElector(utype: string, client: ClientSettings, values: Readonly<Record<string, string | boolean | undefined>>, rideThroughMs = 0): PrimaryElector {
  const { address, member, group } = values;
  if (group !== undefined && member === undefined) throw new UsageError("--group needs --member: it names the group the member joins, e.g. --member node-3 --group cluster.");
  const membership =
    typeof member === "string" ? asUsageError(() => ({ member: checkId("--member", member), ...(typeof group === "string" ? { group: checkId("--group", group) } : {}) })) : undefined;
  return asUsageError(
    () =>
      new PrimaryElector({
        utype,
        transport: clientOf(client),
        address: typeof address === "string" ? address : hostname(),
        announce: true,
        rideThroughMs,
        ...(membership === undefined ? {} : { membership }),
      }),
  );
}

/** The first line of `elect` and `run`: whom they ask, and who they are to it. */
export function identityLine(client: ClientSettings): string {
  const ha = clientOf(client);
  return `authenticating to ${ha.endpoints.join(", ")} as ${ha.identity}`;
}
