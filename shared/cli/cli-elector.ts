import { hostname } from "node:os";
import { checkId } from "../sdk/loop/option-checks.js";
import { PrimaryElector } from "../sdk/election/primary-elector.js";
import { clientOf, parseDuration, type ClientSettings } from "./client-flags.js";
import { isPriority, PRIORITY_RULE } from "../contract/input-rules.js";
import { MAX_RIDE_THROUGH_MS } from "../sdk/election/elector-options.js";
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
    name: "priority",
    value: "N",
    help: "this candidate's priority, an integer, higher preferred (env HA_PRIORITY; default 0):\na free role goes to the highest standby, and a higher one takes the role over\nafter --preempt-after",
  },
  {
    name: "preempt-after",
    value: "D|off",
    help: "stand by D before taking the role from a holder of lower priority, by a planned\nhandover; off never does (env HA_PREEMPT_AFTER; default 30s)",
  },
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
export function createCliElector(
  utype: string,
  client: ClientSettings,
  values: Readonly<Record<string, string | boolean | undefined>>,
  rideThroughMs = 0,
  env: NodeJS.ProcessEnv = {},
): PrimaryElector {
  const { priority, preemptAfterMs } = parsePriorityFlags(values, env);
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
        priority,
        preemptAfterMs,
        ...(membership === undefined ? {} : { membership }),
      }),
  );
}

/**
 * --priority and --preempt-after (docs/protocol.md#priorities-and-preemption), or HA_PRIORITY
 * and HA_PREEMPT_AFTER when the flag is not given: priority 0 and a 30 s hold-down by default.
 * A mistake names the flag or the variable it came from and what to give instead.
 */
export function parsePriorityFlags(
  values: Readonly<Record<string, string | boolean | undefined>>,
  env: NodeJS.ProcessEnv,
): { readonly priority: number; readonly preemptAfterMs: number | "off" | undefined } {
  const given = (flag: string, variable: string): { source: string; text: string } | undefined => {
    const value = values[flag];
    if (typeof value === "string") return { source: `--${flag}`, text: value };
    const fromEnvironment = env[variable]?.trim();
    return fromEnvironment === undefined || fromEnvironment === "" ? undefined : { source: variable, text: fromEnvironment };
  };
  const priorityGiven = given("priority", "HA_PRIORITY");
  let priority = 0;
  if (priorityGiven !== undefined) {
    const parsed = /^[+-]?[0-9]+$/.test(priorityGiven.text) ? Number(priorityGiven.text) : Number.NaN;
    if (!isPriority(parsed)) throw new UsageError(`${priorityGiven.source} must be ${PRIORITY_RULE}, such as 1 for the preferred machine (got ${JSON.stringify(priorityGiven.text)}).`);
    priority = parsed;
  }
  const holdDown = given("preempt-after", "HA_PREEMPT_AFTER");
  if (holdDown === undefined) return { priority, preemptAfterMs: undefined };
  if (holdDown.text === "off") return { priority, preemptAfterMs: "off" };
  let ms: number | undefined;
  try {
    ms = parseDuration("preempt-after", holdDown.text);
  } catch {
    ms = undefined;
  }
  if (ms === undefined || ms > MAX_RIDE_THROUGH_MS) {
    throw new UsageError(`${holdDown.source} must be a duration with a unit, such as 30s or 2m, or off to never preempt (got ${JSON.stringify(holdDown.text)}).`);
  }
  return { priority, preemptAfterMs: ms };
}

/** The first line of `elect` and `run`: whom they ask, and who they are to it. */
export function identityLine(client: ClientSettings): string {
  const ha = clientOf(client);
  return `authenticating to ${ha.endpoints.join(", ")} as ${ha.identity}`;
}
