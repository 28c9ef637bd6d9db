import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { LeaseView } from "../../../shared/contract/lease-view.js";
import { HaClient } from "../../../shared/sdk/transport/ha-client.js";
import { sleep, type AlgorithmContext, type RunningAlgorithm } from "./algorithm.js";

/**
 * The seed algorithm: the protocol's original client algorithm, steps 1–5, over the same
 * service:
 *
 * 1. a new `uuid` per start;
 * 2.–4. every I a GetPrimary; when it is empty, an UpdateHeartBeat (no token: the seed has
 *    none); primary once a later GetPrimary returns our uuid, back to 2 when it returns
 *    another;
 * 5. as primary, every I an UpdateHeartBeat *and* a GetPrimary (two calls per I); primacy
 *    lasts while `now − QueryTime < T − I`, QueryTime being when the last GetPrimary that
 *    returned our uuid was sent; anything else "exits itself and restarts" (here: a new
 *    uuid, back to step 2, in the same process).
 *
 * No takeover timing (a standby learns of an expiry at its next poll and needs one more
 * poll to see its own uuid), no lease token, no release: SIGTERM just exits.
 */
export function runSeed(context: AlgorithmContext): RunningAlgorithm {
  const { intervalMs: I, timeoutMs: T } = context;
  const client = new HaClient({ endpoint: context.endpoint, timeoutInMs: I });
  const stopping = new AbortController();

  async function getPrimary(): Promise<LeaseView | undefined> {
    try {
      return await client.getPrimary(context.utype, { timeoutInMs: I });
    } catch {
      return undefined; // no answer within I, or a corrupted one
    }
  }
  /** True when the service says this uuid's term is over for good (409 LeaseRevoked). */
  async function updateHeartBeat(uuid: string): Promise<boolean> {
    try {
      return (await client.heartbeat(context.utype, { uuid }, { timeoutInMs: I })).outcome === "revoked";
    } catch {
      return false; // The seed learns the outcome from the next GetPrimary, not from this answer.
    }
  }

  async function loop(): Promise<void> {
    let uuid = randomUUID();
    let primary = false;
    let queryTime = 0;
    let nextTick = performance.now();
    const demote = (reason: string): void => {
      context.emit({ event: "demoted", uuid, reason });
      primary = false;
      uuid = randomUUID(); // "exit itself and restart"
    };
    while (!stopping.signal.aborted) {
      if (primary) {
        await updateHeartBeat(uuid);
        const sentAt = performance.now();
        const view = await getPrimary();
        if (view !== undefined && view.primary?.uuid === uuid) queryTime = sentAt;
        else if (view !== undefined) demote(view.primary === null ? "empty" : "rejected");
        // 5a: no confirming GetPrimary for T − I: not primary any more.
        if (primary && performance.now() - queryTime >= T - I) demote("lease-expired");
      } else {
        const sentAt = performance.now();
        const view = await getPrimary();
        // The seed's service would take an old uuid back; ours ends a uuid's term for good (a
        // follower whose acquire was applied but never confirmed, then taken over). The seed
        // would be stuck; a new uuid is what its "restart" gives, so that is what it does here.
        if (view?.primary === null && (await updateHeartBeat(uuid))) uuid = randomUUID();
        else if (view?.primary?.uuid === uuid) {
          primary = true;
          queryTime = sentAt;
          context.emit({ event: "elected", uuid });
        } else if (view?.primary) context.emit({ event: "following" });
      }
      // Every I, on a fixed cadence; a late tick runs at once rather than drifting.
      nextTick += I;
      await sleep(Math.max(0, nextTick - performance.now()), stopping.signal);
      if (primary && performance.now() - queryTime >= T - I) demote("lease-expired");
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
