/**
 * What membership reports for metrics; the domain knows only this port (shared/http/service-metrics.ts
 * turns it into OpenTelemetry instruments). The default reports nothing.
 */

/**
 * A member's stored transitions: `joined` (a first row), `rejoined` (a new session replaced
 * a failed or leaving one), `left` (a goodbye), `removed` (the sweeper deleted the row).
 * Active, suspect and failed are judged from ages when read, so they are not events here.
 */
export type MemberTransition = "joined" | "rejoined" | "left" | "removed";

/** One sweep: `completed`, or `failed` when a store call ended it (the next one starts over). */
export type SweepResult = "completed" | "failed";

export interface MemberMetrics {
  transition(transition: MemberTransition, count?: number): void;
  sweep(result: SweepResult, durationMs: number): void;
}

export const noMemberMetrics: MemberMetrics = {
  transition: () => undefined,
  sweep: () => undefined,
};
