import type { InvocationContext } from "../shared/http/azure-functions.js";
import type { Runtime } from "../shared/http/runtime.js";

/**
 * The sweeper, a timer trigger (HA_SWEEP_SCHEDULE, every 5 s by default): records gaps in
 * the service's own operation, deletes rows leaving past the retention and sessions stuck
 * in joining, bounds each group, and never removes every member of a group at once (see
 * shared/members/sweep-plan.ts). The local host runs this same function on a timer.
 */
export async function sweepMembers({ sweeper }: Runtime, context: InvocationContext): Promise<void> {
  const report = await sweeper.sweep((message) => context.warn(message));
  if (report.deleted.length > 0) {
    context.log(`sweepMembers: removed ${report.deleted.map((gone) => `${gone.group}/${gone.member} (${gone.reason})`).join(", ")}.`);
  }
}
