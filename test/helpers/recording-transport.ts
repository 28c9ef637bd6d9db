import type { HeartbeatBody } from "../../shared/contract/heartbeat-body.js";
import type { LeaseView } from "../../shared/contract/lease-view.js";
import type { HeartbeatResult, ReleaseResult } from "../../shared/contract/outcomes.js";
import type { CallOptions, LeaseTransport, ReleaseOptions } from "../../shared/sdk/transport/lease-transport.js";

/** One UpdateHeartBeat as the elector sent it: when (performance.now()), and what came of it. */
export interface SentHeartbeat {
  readonly uuid: string;
  readonly sentAt: number;
  answeredAt?: number;
  outcome?: HeartbeatResult["outcome"] | "failed";
}

/**
 * A LeaseTransport around a real one that records every heartbeat. The elector takes its
 * `sentAt` just before it calls heartbeat(), so the time recorded here is the same instant
 * or a little later: a deadline computed from it (sentAt + T − I) is never earlier than the
 * elector's own, and an assertion that the elector stepped down by it is sound.
 */
export class RecordingTransport implements LeaseTransport {
  readonly heartbeats: SentHeartbeat[] = [];

  constructor(private readonly inner: LeaseTransport) {}

  getPrimary(utype: string, options?: CallOptions): Promise<LeaseView> {
    return this.inner.getPrimary(utype, options);
  }

  async heartbeat(utype: string, request: HeartbeatBody, options?: CallOptions): Promise<HeartbeatResult> {
    const sent: SentHeartbeat = { uuid: request.uuid, sentAt: performance.now() };
    this.heartbeats.push(sent);
    try {
      const result = await this.inner.heartbeat(utype, request, options);
      sent.outcome = result.outcome;
      return result;
    } catch (error) {
      sent.outcome = "failed";
      throw error;
    } finally {
      sent.answeredAt = performance.now();
    }
  }

  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult> {
    return this.inner.release(utype, uuid, options);
  }

  /** The send time of the last accepted heartbeat of `uuid` answered before `before`. */
  lastAcceptedSentAt(uuid: string, before: number): number | undefined {
    const accepted = this.heartbeats.filter((h) => h.uuid === uuid && h.outcome === "accepted" && (h.answeredAt ?? Infinity) <= before);
    return accepted.length === 0 ? undefined : Math.max(...accepted.map((h) => h.sentAt));
  }
}
