/**
 * How far apart a standby's polls are. Standbys started together (a deploy, a restart of
 * every host) would otherwise poll in the same millisecond forever; a random stretch of
 * each wait lets them drift apart. Only standby polls wait this way: renewals keep their
 * I, and a takeover is sent at the holder's expiry, never later (failover time).
 */

/** Each standby poll waits I·(1 + POLL_JITTER·U), U uniform in [0, 1): I to 1.2·I, 1.1·I on average. */
export const POLL_JITTER = 0.2;

/** The factor a standby's wait is stretched by: 1 + POLL_JITTER·U, with U drawn from `random` (clamped to [0, 1]). */
export function pollStretch(random: () => number): number {
  const draw = random();
  const u = Number.isFinite(draw) ? Math.min(Math.max(draw, 0), 1) : 0;
  return 1 + POLL_JITTER * u;
}
