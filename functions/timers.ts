import type { TimerOperation } from "../shared/http/timer.js";
import { sweepMembers } from "./sweep-members.js";
import { sweepStandbys } from "./sweep-standbys.js";

/** The functions that run on a schedule: Azure registers them as timer triggers, the local host runs them on a timer. */
export const timers: readonly TimerOperation[] = [
  { name: "sweepMembers", handler: sweepMembers },
  { name: "sweepStandbys", handler: sweepStandbys },
];
