/** The function host's wall clock (ha_time, UTC ms). Injected so that tests control time. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
