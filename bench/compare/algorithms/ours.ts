import { PrimaryElector } from "../../../shared/sdk/election/primary-elector.js";
import type { AlgorithmContext, RunningAlgorithm } from "./algorithm.js";

/** ours: `PrimaryElector` exactly as shipped (shared/sdk), nothing tuned for the bench. */
export function runOurs(context: AlgorithmContext): RunningAlgorithm {
  const elector = new PrimaryElector({ utype: context.utype, endpoint: context.endpoint });
  elector.on("elected", ({ uuid }) => context.emit({ event: "elected", uuid }));
  elector.on("demoted", ({ uuid, reason }) => context.emit({ event: "demoted", uuid, reason }));
  elector.on("primaryChanged", ({ primary }) => {
    if (primary !== null && primary.uuid !== elector.uuid) context.emit({ event: "following" });
  });
  elector.on("error", () => {
    // Failed calls are expected under loss; the wire counts show them.
  });
  elector.start();
  // SIGTERM: stop() awaits the demotion, then releases with the token: a standby takes over at once.
  return { stop: () => elector.stop() };
}
