import { HaClient } from "../sdk/ha-client.js";
import { checkId } from "../sdk/option-checks.js";
import { parseCommandLine } from "./client-flags.js";
import { asUsageError } from "./cli-elector.js";
import { UsageError } from "./usage.js";

/** `ha-module primary [utype]`: GetPrimary as one JSON line; every live primary without a utype. */
export async function primaryCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { positionals, client } = parseCommandLine(args, {}, env);
  if (positionals.length > 1) throw new UsageError(`primary takes at most one utype (got ${positionals.length}).`);
  const utype = positionals[0] === undefined ? undefined : asUsageError(() => checkId("utype", positionals[0]));
  const ha = asUsageError(() => new HaClient({ endpoint: client.endpoint, ...(client.apiKey === undefined ? {} : { apiKey: client.apiKey }) }));
  const answer = utype === undefined ? { primaries: await ha.listPrimaries() } : await ha.getPrimary(utype);
  process.stdout.write(`${JSON.stringify(answer)}\n`);
  return 0;
}
