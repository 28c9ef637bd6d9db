import type { HeartbeatBody } from "../../contract/heartbeat-body.js";
import type { LeaseView } from "../../contract/lease-view.js";
import type { HeartbeatResult } from "../../contract/outcomes.js";
import type { LeaseTiming } from "../../contract/timing.js";
import { sleep, type ElectorClock } from "../loop/elector-clock.js";
import { CorruptedMessageError } from "../transport/corrupted-message-error.js";
import { HaRequestError } from "../transport/ha-request-error.js";
import type { LeaseTransport } from "../transport/lease-transport.js";
import type { CallKind } from "./call-failures.js";
import { DeadlineAlarm } from "./deadline-alarm.js";
import { epochHeldBy, type Elected, type LeadEnd, type Term } from "./elector-role.js";
import { renewHedged } from "./hedged-renewal.js";
import type { RenewalTimer } from "./renewal-timer.js";
import type { RideThrough } from "./ride-through.js";

/**
 * What the lead phase needs of its elector: who it is, its clock and its rules (ride-through,
 * the renewal budget, the participant's grid), and what an answer or a failure does to its
 * state (observe, fail, roundTrip, changeTerm). The phase owns only its loop's own state:
 * when to renew next, the deadline alarm, whether to send the address.
 */
export interface LeadHost {
  readonly utype: string;
  readonly address: string | undefined;
  readonly affinity: string | undefined;
  /** This candidate's priority (docs/protocol.md#priorities-and-preemption); 0: none stated. */
  readonly priority: number;
  readonly clock: ElectorClock;
  readonly ride: RideThrough;
  readonly renewalTimer: RenewalTimer;
  /** Where renewals go now: the participant's part when the transport batches, else the transport. */
  calls(): Pick<LeaseTransport, "heartbeat">;
  /** Aborted when the loop must end (stop()). */
  readonly halt: AbortSignal;
  /** I and T as the service last reported them. */
  timing(): LeaseTiming | undefined;
  /** Whether the elector still leads (not winding down in stop()). */
  leading(): boolean;
  /** A wake time on the participant's grid (transport/cadence.ts). */
  align(at: number, mayDelay: boolean, mayAdvance?: boolean): number;
  fail(error: unknown, call?: CallKind, sentAt?: number): void;
  roundTrip(ms: number, timing: LeaseTiming, call: "renewal" | "acquisition"): void;
  /** Books an answer (`call`: a read's answer does not end the refusals of writes). */
  observe(view: LeaseView, call?: CallKind): void;
  /** A renewal was accepted at another epoch: the term that replaces `old`. */
  changeTerm(old: Term, epoch: number): Term;
  /** Affinity: the other utype's live primary is at our address; a failed read proves nothing: `onFailure`. */
  affinityHolds(affinity: string, budgetMs: number, signal: AbortSignal, onFailure: boolean): Promise<boolean>;
}

/**
 * Primary: one fast-path heartbeat per I. Accepted → deadline = sentAt + (T − I).
 * 409 → the term ends, unless the answer names this uuid as the live holder at the held
 * epoch (our own echo won a race). A failure → try again, each call bounded by the time
 * left. While stop() awaits its handlers (`releasing`) the lease is renewed the same way.
 * With `rideThroughMs`, the deadline ends the term only after that much more, while every
 * failure was an outage (ride-through.ts); renewals go on meanwhile, each within T − I.
 */
export async function leadTerm(host: LeadHost, { term: first, sentAt: acquiredAt, view: acquired }: Elected, resignation: AbortController): Promise<LeadEnd> {
  let term = first;
  let renewAt = acquiredAt + acquired.intervalMs;
  // Whether renewAt is I after an accepted renewal's sentAt: only then may it go at once when
  // its grid point has just passed (transport/cadence.ts); after a failure it waits.
  let answered = true;
  // Renewals omit the address (the service keeps the stored one, and the body stays
  // small); after an answer showing another address than ours, the next one sends it.
  let sendAddress = acquired.primary?.address !== (host.address ?? null);
  const alarm = new DeadlineAlarm(host.clock);
  alarm.arm(host.ride.endOf(term));
  host.ride.watch(term);
  // A renewal met a refusal, not an outage: no ride-through for this term until one is accepted.
  const refused = (error: unknown): void => {
    if (host.ride.refused(term, error)) alarm.arm(host.ride.endOf(term));
  };
  const wake = AbortSignal.any([host.halt, alarm.signal, resignation.signal]);
  const ended = (): LeadEnd | undefined => {
    if (host.clock.now() >= host.ride.endOf(term)) return { reason: "lease-expired", term };
    if (host.halt.aborted) return { reason: "halted", term };
    if (resignation.signal.aborted) return { reason: "resigned", term };
    host.ride.watch(term);
    return undefined;
  };
  try {
    for (;;) {
      await sleep(host.clock, host.align(renewAt, false, answered) - host.clock.now(), wake);
      answered = false;
      const beforeRenewal = ended();
      if (beforeRenewal !== undefined) return beforeRenewal;
      const timing = host.timing() ?? acquired;
      renewAt = host.clock.now() + timing.intervalMs;
      // The priority with every renewal: the service keeps the one the holder states (0 is never sent).
      const stated = host.priority === 0 ? {} : { priority: host.priority };
      const request: HeartbeatBody = sendAddress ? { uuid: term.uuid, address: host.address ?? null, lease: term.lease, ...stated } : { uuid: term.uuid, lease: term.lease, ...stated };
      const answer = await renew(host, timing, term, request, wake, refused);
      const afterRenewal = ended();
      if (afterRenewal !== undefined) return afterRenewal;
      if (answer === undefined) {
        renewAt = Math.max(renewAt, host.clock.now());
        continue;
      }
      const { value: result, sentAt } = answer;
      const epoch = epochHeldBy(result.view, term.uuid);
      if (result.outcome === "accepted" && epoch === undefined) {
        host.fail(acceptedForAnother(host.utype));
        renewAt = Math.max(renewAt, host.clock.now());
        continue;
      }
      host.roundTrip(host.clock.now() - sentAt, result.view, "renewal");
      if (result.outcome !== "accepted" || epoch === undefined) {
        // `revoked` when the answer shows this uuid's lease revoked; a 409 LeaseRevoked naming
        // another holder means this uuid's term ended by a takeover (after a pause, or while
        // riding through): rejected, as a takeover is.
        const revoked = result.outcome === "revoked" && result.view.primary?.uuid === term.uuid;
        if (epoch !== term.epoch) return { reason: revoked ? "revoked" : "rejected", term, view: result.view };
        // Our own echo (a retry, a duplicate) won the race: the lease is still ours, but
        // this answer says nothing about when it was renewed. Keep the deadline, do not
        // extend it, and renew again at once.
        host.observe(result.view);
        renewAt = host.clock.now();
        continue;
      }
      host.observe(result.view);
      sendAddress = result.view.primary?.address !== (host.address ?? null);
      if (epoch !== term.epoch) term = host.changeTerm(term, epoch);
      term.lease = result.lease;
      term.deadline = sentAt + (result.view.timeoutMs - result.view.intervalMs);
      host.ride.renewed(term);
      renewAt = sentAt + result.view.intervalMs;
      answered = true;
      alarm.arm(host.ride.endOf(term));
      host.ride.watch(term);
      // An operator asked for a planned handover: step down (stop() winding down keeps renewing).
      if (result.view.handover?.phase === "pending" && host.leading()) return { reason: "handover", term, handover: result.view.handover };
      if (host.affinity !== undefined && host.leading()) {
        const holds = await host.affinityHolds(host.affinity, Math.max(1, term.deadline - host.clock.now()), wake, true);
        const afterAffinity = ended();
        if (afterAffinity !== undefined) return afterAffinity;
        if (!holds) return { reason: "affinity-lost", term };
      }
    }
  } finally {
    alarm.disarm();
    host.ride.unwatch();
  }
}

/**
 * One renewal, sent again at once whenever the renewal budget passes without an answer
 * (renewal-timer.ts: the budget doubles with each copy of this renewal), earlier copies
 * left running: the first answer counts, with the sentAt of its copy. Undefined when the
 * term ended meanwhile, or when the newest copy failed fast (the cadence I goes on).
 */
function renew(
  host: LeadHost,
  timing: LeaseTiming,
  term: Term,
  request: HeartbeatBody,
  wake: AbortSignal,
  refused: (error: unknown) => void,
): Promise<{ readonly value: HeartbeatResult; readonly sentAt: number } | undefined> {
  // Riding through, the ride bounds each renewal (ride-through.ts).
  const { deadline, capMs } = host.ride.renewalBounds(term, timing);
  return renewHedged({
    clock: host.clock,
    deadline,
    signal: wake,
    budgetMs: (unanswered, leftMs) => Math.min(host.renewalTimer.budgetMs(timing, host.clock.now(), unanswered, leftMs), capMs),
    send: (options) => host.calls().heartbeat(host.utype, request, options),
    onUnanswered: (budgetMs) => {
      const error = new HaRequestError(`UpdateHeartBeat(${host.utype}): no answer within ${Math.ceil(budgetMs)} ms; sent again, the earlier copy still awaited.`, "Timeout", undefined);
      host.fail(error, "write", host.clock.now() - budgetMs);
    },
    onFailure: (error) => {
      host.fail(error);
      refused(error);
    },
  });
}

/** A transport that is not an HaClient may skip the check HaClient makes of an accepted answer. */
export function acceptedForAnother(utype: string): CorruptedMessageError {
  return new CorruptedMessageError(`UpdateHeartBeat(${utype}): corrupted message (the accepted heartbeat names another primary).`, 200);
}
