import type { InvocationContext } from "../shared/http/azure-functions.js";
import type { Runtime } from "../shared/http/runtime.js";

/**
 * The standby sweeper, a timer trigger on HA_SWEEP_SCHEDULE (every 5 s by default): deletes
 * the lease standby rows not announced for T, which no read shows and no read deletes
 * (docs/protocol.md#standbys; shared/lease/standby-sweeper.ts). The local host runs this
 * same function on a timer.
 */
export async function sweepStandbys({ standbySweeper }: Runtime, context: InvocationContext): Promise<void> {
  const report = await standbySweeper.sweep();
  if (report.deleted.length > 0) {
    context.log(`sweepStandbys: removed the standby rows not announced for T: ${report.deleted.map((row) => `${row.utype}/${row.uuid}`).join(", ")}.`);
  }
}
