import type { LeaseView } from "../../contract/lease-view.js";
import type { LeaseTiming } from "../../contract/timing.js";
import { pollBudgetMs } from "../loop/budgets.js";
import { sleep } from "../loop/elector-clock.js";
import type { LoopSetup } from "../loop/loop-setup.js";
import { pollStretch } from "../loop/poll-delays.js";
import { planFrom } from "../transport/cadence.js";
import type { LeaseTransport } from "../transport/lease-transport.js";
import type { CallFailures, CallKind } from "./call-failures.js";
import { DeadlineAlarm } from "./deadline-alarm.js";
import { fastPollMs, handoverFor, takeoverTime, type AcquireOutcome, type Elected, type FollowStart } from "./elector-role.js";
import type { StickyTakeBack } from "./sticky-take-back.js";
import { judgeUuid, type UuidEvent } from "./unconfirmed-uuid.js";

/**
 * What the follow phase needs of its elector: who it is (its uuid, drawn anew when the uuid
 * rule says so), its setup and clock, the rules it consults (sticky take-back and hold-back,
 * the backoff of failed calls, a resign()'s cool-down, announcements) and the calls it makes
 * through the elector so that their answers and failures are booked there (poll, acquire,
 * observe). The phase owns only its loop's own state: when to poll and to take over next.
 */
export interface FollowHost {
  readonly utype: string;
  readonly affinity: string | undefined;
  readonly setup: LoopSetup<LeaseTransport>;
  readonly random: () => number;
  /** Aborted when the loop must end (stop()). */
  readonly halt: AbortSignal;
  readonly sticky: StickyTakeBack;
  readonly failures: CallFailures;
  /** This incarnation's uuid now. */
  uuid(): string;
  /** Draws a new uuid (judgeUuid said the old one may hold a term this elector does not lead). */
  newUuid(): void;
  /** I and T as the service last reported them. */
  timing(): LeaseTiming | undefined;
  /** No acquire or takeover before this time: a resign()'s cool-down. */
  competeAt(): number;
  /**
   * When the hold-down before preempting the holder ends (docs/protocol.md#priorities-and-preemption),
   * while the holder last seen is one this elector would preempt: a poll (an announcement
   * asking to preempt) is due then. Undefined: none to plan.
   */
  preemptAt(): number | undefined;
  /** Whether this poll is a standby's announcement (`announcedLast`: the last one was). */
  announceDue(announcedLast: boolean): boolean;
  /** UpdateHeartBeat without a token (an announcement with `announce`). */
  acquire(announce?: boolean): Promise<AcquireOutcome>;
  /** Affinity: the other utype's live primary is at our address; a failed read proves nothing: `onFailure`. */
  affinityHolds(affinity: string, budgetMs: number, signal: AbortSignal, onFailure: boolean): Promise<boolean>;
  /** GetPrimary of the role within `budgetMs`; undefined when it failed (booked as a failed read). */
  poll(budgetMs: number, signal: AbortSignal): Promise<LeaseView | undefined>;
  /** A wake time on the participant's grid (transport/cadence.ts). */
  align(at: number, mayDelay: boolean, mayAdvance?: boolean): number;
  /** Books an answer (`call`: a read's answer does not end the refusals of writes). */
  observe(view: LeaseView, call?: CallKind): void;
  /** Releases this elector's last term, still live, with its token: true when proven released. */
  releaseOwnLastTerm(): Promise<boolean>;
}

/**
 * Follower: GetPrimary every I. No primary (or ourselves, after a lost answer) → send
 * UpdateHeartBeat now. A live other primary → take over at its expiresInMs.
 */
export async function follow(host: FollowHost, start: FollowStart): Promise<Elected | undefined> {
  const halt = host.halt;
  let { pollAt, takeoverAt } = start;
  // Whether this uuid may hold a term this elector does not lead (see judgeUuid).
  let unconfirmed = false;
  const judge = (event: UuidEvent): void => {
    const judgement = judgeUuid(unconfirmed, event);
    unconfirmed = judgement.unconfirmed;
    if (judgement.drawNew) host.newUuid();
  };
  const shown = (view: LeaseView): UuidEvent => ({ kind: "shown", holder: view.primary === null ? "none" : view.primary.uuid === host.uuid() ? "self" : "other" });
  // Whether the last poll was an announcement (see FollowHost.announceDue).
  let announcedLast = false;
  for (;;) {
    // A resign()'s cool-down holds back a takeover (it only watches until then).
    if (takeoverAt !== undefined) takeoverAt = Math.max(takeoverAt, host.competeAt());
    // So does lost contact, while the role's holder may come back (recomputed every time:
    // the hold-back has no end until an answer comes).
    const takeoverDue = takeoverAt === undefined ? undefined : Math.max(takeoverAt, host.sticky.holdBackUntil(host.uuid()));
    // Retry-After holds back the takeover too: the service said it would refuse it.
    // A poll wakes on the participant's grid (it may wait up to I/4 for it, unless it is a
    // quick one: a standby polling fast for a handover to it); a takeover never waits.
    // A holder taking its role back after an outage looks off the grid too: on it, a look can
    // come up to about 2·I after the last, and a standby's hold-back may end first.
    // The hold-down before preempting ends before the next poll: poll then, so that the
    // preemption is asked for at once, not up to T/2 later at the next announcement.
    const preemptAt = host.preemptAt();
    if (preemptAt !== undefined && preemptAt > host.setup.clock.now()) pollAt = Math.min(pollAt, preemptAt);
    const timing = host.timing();
    const quick = (timing !== undefined && pollAt - host.setup.clock.now() < timing.intervalMs / 2) || host.sticky.pending;
    const planned = pollAt;
    const pollWake = host.align(pollAt, !quick);
    const wakeAt = Math.max(takeoverDue === undefined ? pollWake : Math.min(pollWake, takeoverDue), host.failures.notBefore);
    await sleep(host.setup.clock, wakeAt - host.setup.clock.now(), halt);
    if (halt.aborted) return undefined;
    const startedAt = host.setup.clock.now();
    const pollMs = pollBudgetMs(host.timing(), host.setup.retryDelayMs);
    const stretch = pollStretch(host.random);
    // On a participant's grid the next poll is planned from this one's plan (planFrom), so the
    // standby polls every 1.1·I on average, as alone. A lone elector, or a quick poll, plans from now.
    const cadenceFrom = host.setup.part !== undefined && !quick ? planFrom(planned, startedAt, pollMs) : startedAt;
    pollAt = cadenceFrom + pollMs * stretch;
    if (host.affinity !== undefined) {
      const holds = await host.affinityHolds(host.affinity, pollMs, halt, false);
      if (halt.aborted) return undefined;
      if (!holds) {
        takeoverAt = undefined;
        pollAt = host.failures.afterRefusal(pollAt, startedAt, stretch, host.timing());
        continue;
      }
    }
    let attempt: AcquireOutcome | undefined;
    const takingOver = takeoverAt !== undefined && host.setup.clock.now() >= Math.max(takeoverAt, host.sticky.holdBackUntil(host.uuid()));
    const announcing: boolean = !takingOver && host.announceDue(announcedLast);
    announcedLast = announcing;
    if (takingOver) {
      takeoverAt = undefined;
      attempt = await host.acquire();
    } else if (announcing) {
      // A standby's announcement: a heartbeat that, refused, records it (docs/protocol.md#standbys).
      // It never acquires (Conflict where it would): a free role is acquired at once by a plain one.
      attempt = await host.acquire(true);
      if (attempt.kind === "unanswered") {
        // An announcement never starts a term, so its uuid holds nothing unseen: a failed poll.
        pollAt = host.failures.afterRefusal(afterFailure(host, pollAt, startedAt), startedAt, stretch, host.timing());
        continue;
      }
      if (attempt.kind === "refused" && !attempt.ended && !halt.aborted && (attempt.view.primary === null || attempt.view.primary.uuid === host.uuid())) {
        judge(shown(attempt.view));
        if (attempt.view.primary === null && host.setup.clock.now() < host.sticky.holdBackUntil(host.uuid())) {
          // Lost contact: the free role is taken when the hold-back ends, not now.
          takeoverAt = host.setup.clock.now();
          continue;
        }
        attempt = await host.acquire();
      }
    } else {
      // A poll still out when the takeover falls due is cut off: the takeover waits for no
      // answer. Not when it is a hold-back that ends (after lost contact): there is no hurry
      // then, and this poll's failure would say the service is out again, which the
      // takeover must not run into.
      const takeoverAlarm = new DeadlineAlarm(host.setup.clock);
      const heldBack = takeoverDue !== undefined && takeoverAt !== undefined && takeoverDue > takeoverAt;
      if (takeoverDue !== undefined && !heldBack) takeoverAlarm.arm(takeoverDue);
      const view = await host.poll(pollMs, AbortSignal.any([halt, takeoverAlarm.signal]));
      takeoverAlarm.disarm();
      if (halt.aborted) return undefined;
      if (view === undefined) {
        pollAt = host.failures.afterRefusal(afterFailure(host, pollAt, startedAt), startedAt, stretch, host.timing());
        continue;
      }
      host.observe(view, "read");
      judge(shown(view));
      pollAt = handoverFor(view, host.uuid()) ? startedAt + fastPollMs(view) : cadenceFrom + view.intervalMs * stretch;
      takeoverAt = takeoverTime(view, host.uuid(), host.setup.clock.now());
      if (view.primary !== null && host.sticky.shows(view)) {
        // Its own last term still holds a live lease (a renewal that landed as the term ended,
        // or a service back before the expiry), which nobody renews: released with its token,
        // the role is taken back now rather than at that lease's expiry.
        if (await host.releaseOwnLastTerm()) {
          if (halt.aborted) return undefined;
          takeoverAt = undefined;
          attempt = await host.acquire();
        }
      } else if (view.primary === null || view.primary.uuid === host.uuid()) {
        if (host.setup.clock.now() < host.competeAt()) pollAt = Math.min(pollAt, host.competeAt());
        // Lost contact: the free role is taken when the hold-back ends (a poll before then may still show its holder back).
        else if (view.primary === null && host.setup.clock.now() < host.sticky.holdBackUntil(host.uuid())) takeoverAt = host.setup.clock.now();
        else attempt = await host.acquire();
      }
    }
    switch (attempt?.kind) {
      case "elected":
        return attempt.elected;
      case "refused":
        // Ended: an earlier acquire of ours landed and was revoked or taken over, or a
        // release retired it: compete on as a new incarnation.
        judge(attempt.ended ? { kind: "ended" } : shown(attempt.view));
        takeoverAt = takeoverTime(attempt.view, host.uuid(), host.setup.clock.now());
        // Refused, yet the answer shows this uuid as the live holder: another copy of the acquire
        // won the race (the service answered this one Conflict). Acquire again at once, which
        // renews it, as after a late acceptance, rather than a poll later.
        if (!attempt.ended && attempt.view.primary?.uuid === host.uuid() && !attempt.view.primary.revoked) takeoverAt = host.setup.clock.now();
        // Refused because its own last term still holds a live lease (a look answered by an
        // instance that saw it expired, the acquire by one that did not): released with its
        // token, it is acquired at once, as after a look that shows it (above).
        if (!attempt.ended && attempt.view.primary !== null && host.sticky.shows(attempt.view) && (await host.releaseOwnLastTerm())) takeoverAt = host.setup.clock.now();
        if (handoverFor(attempt.view, host.uuid())) pollAt = Math.min(pollAt, startedAt + fastPollMs(attempt.view));
        break;
      case "too-late":
        judge({ kind: "too-late" });
        pollAt = host.setup.clock.now();
        break;
      case "unanswered":
        judge({ kind: "unanswered" });
        pollAt = afterFailure(host, pollAt, startedAt);
        break;
    }
    // Whatever the reads answered: a refused write holds back every call of the next poll too.
    pollAt = host.failures.afterRefusal(pollAt, startedAt, stretch, host.timing());
    if (halt.aborted) return undefined;
  }
}


/** A follower's next call after one that got no answer (CallFailures.afterFailure): a holder whose term ended for want of answers looks every I. */
function afterFailure(host: FollowHost, pollAt: number, startedAt: number): number {
  return host.failures.afterFailure(pollAt, startedAt, host.timing(), host.sticky.pending);
}
