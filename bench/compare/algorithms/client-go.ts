import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { HaClient } from "../../../shared/sdk/transport/ha-client.js";
import { sleep, type AlgorithmContext, type RunningAlgorithm } from "./algorithm.js";

/**
 * The client-go way: k8s.io/client-go/tools/leaderelection (leaderelection.go, v1.27 and
 * later) scaled to the same T and I, over the same service. The record a `Get` returns is
 * the service's GetPrimary (holder = primary.uuid, its version = renewedAt); an `Update`
 * is an UpdateHeartBeat.
 *
 * - LeaseDuration = T, RenewDeadline = ⅔·T (client-go's defaults are 15 s / 10 s),
 *   RetryPeriod = I, JitterFactor = 1.2 (JitterUntil: wait I·(1 + 1.2·U) after each try).
 * - tryAcquireOrRenew: (1) the fast path: while leader and the lease valid on our clock,
 *   Update optimistically against the last observed version (here: the lease token, the
 *   service's equivalent of resourceVersion); on failure fall back to (2) Get; a record
 *   that differs from the observed one resets observedTime to now, *our* clock; (3) while
 *   another holder's record is younger than LeaseDuration on our clock, don't try; (4)
 *   otherwise Update (acquire or take over).
 * - GetPrimary hides an expired holder, while the Kubernetes Lease keeps naming it; so an
 *   empty answer after a holder was observed is the same record, unchanged: standbys take
 *   over only after observing it unchanged for a full LeaseDuration on their own clock.
 * - renew: PollImmediateUntil(RetryPeriod) under a RenewDeadline context; a round with no
 *   success within RenewDeadline loses leadership (controller-manager then exits and is
 *   restarted; here: a new identity, acquiring again).
 * - Each request times out after RenewDeadline / 2 (client-go's own calls have no timeout
 *   of their own besides the context; the components set their client's to about that).
 * - ReleaseOnCancel is false by default: SIGTERM just exits and the lease runs out.
 */
export function runClientGo(context: AlgorithmContext): RunningAlgorithm {
  const { intervalMs: retryPeriod, timeoutMs: leaseDuration } = context;
  const renewDeadline = (2 * leaseDuration) / 3;
  const jitterFactor = 1.2;
  const requestTimeout = Math.round(renewDeadline / 2);
  const client = new HaClient({ endpoint: context.endpoint, timeoutInMs: requestTimeout });
  const stopping = new AbortController();

  let identity = randomUUID();
  let observedRecord: string | undefined; // holder + version, as last seen
  let observedHolder = "";
  let observedTime = 0;
  let leaderToken: string | undefined;

  const isLeader = (): boolean => observedHolder === identity;
  const leaseValid = (now: number): boolean => observedTime + leaseDuration > now;

  async function update(token: string | undefined, deadline: AbortSignal): Promise<boolean> {
    try {
      const result = await client.heartbeat(context.utype, token === undefined ? { uuid: identity } : { uuid: identity, lease: token }, {
        timeoutInMs: requestTimeout,
        abortSignal: deadline,
      });
      if (result.outcome !== "accepted") return false;
      leaderToken = result.lease;
      observedHolder = identity;
      observedRecord = `${identity}@${result.view.primary?.renewedAt ?? ""}`;
      observedTime = performance.now();
      return true;
    } catch {
      return false;
    }
  }

  async function tryAcquireOrRenew(deadline: AbortSignal): Promise<boolean> {
    const now = performance.now();
    // 1. fast path for the leader: update optimistically against the last observed version.
    if (isLeader() && leaseValid(now) && (await update(leaderToken, deadline))) return true;
    // 2. obtain the record.
    let view;
    try {
      view = await client.getPrimary(context.utype, { timeoutInMs: requestTimeout, abortSignal: deadline });
    } catch {
      return false;
    }
    if (view.primary !== null) {
      const record = `${view.primary.uuid}@${view.primary.renewedAt}`;
      if (record !== observedRecord) {
        observedRecord = record;
        observedHolder = view.primary.uuid;
        observedTime = performance.now();
      }
    } else if (observedRecord === undefined) {
      observedHolder = ""; // no record at all: anyone may acquire
    }
    // 3. another holder, still valid on our clock: not yet.
    if (observedHolder !== "" && observedHolder !== identity && leaseValid(performance.now())) {
      context.emit({ event: "following" });
      return false;
    }
    // 4. acquire or take over (no token: this Update is against the record just read).
    return update(isLeader() ? leaderToken : undefined, deadline);
  }

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      // acquire: JitterUntil(tryAcquireOrRenew, RetryPeriod, 1.2, sliding)
      while (!stopping.signal.aborted && !(await tryAcquireOrRenew(stopping.signal))) {
        await sleep(retryPeriod * (1 + jitterFactor * Math.random()), stopping.signal);
      }
      if (stopping.signal.aborted) return;
      context.emit({ event: "elected", uuid: identity });
      // renew: Until(round, RetryPeriod); a round polls every RetryPeriod within RenewDeadline.
      for (;;) {
        const roundStart = performance.now();
        // The round's end from a timer this loop holds: on Node 20 an AbortSignal.timeout()
        // held only by AbortSignal.any() can be garbage-collected and never fire, and the
        // leader would then keep its leadership through any outage.
        const roundEnds = new AbortController();
        const roundTimer = setTimeout(() => roundEnds.abort(), Math.round(renewDeadline));
        const deadline = AbortSignal.any([stopping.signal, roundEnds.signal]);
        let renewed = false;
        try {
          while (!deadline.aborted) {
            if (await tryAcquireOrRenew(deadline)) {
              renewed = true;
              break;
            }
            const left = roundStart + renewDeadline - performance.now();
            await sleep(Math.min(retryPeriod, Math.max(0, left)), deadline);
          }
        } finally {
          clearTimeout(roundTimer);
        }
        if (stopping.signal.aborted) return;
        if (!renewed) {
          context.emit({ event: "demoted", uuid: identity, reason: "lease-expired" });
          // As a restarted process would: a new identity that has observed nothing yet.
          identity = randomUUID();
          observedRecord = undefined;
          observedHolder = "";
          leaderToken = undefined;
          break;
        }
        await sleep(retryPeriod, stopping.signal);
      }
    }
  }
  const done = loop();
  return {
    stop: async () => {
      stopping.abort();
      await done;
    },
  };
}
