import type { ParticipantHeartbeatBody, ParticipantResults } from "../../contract/participant.js";
import type { CallOptions } from "./lease-transport.js";

/**
 * A transport that can send a participant heartbeat (docs/api.md#participant-heartbeat): one
 * request for every part of one participant. Each part's result is what its own call would
 * have returned (`ok`) or thrown (`ok: false`), typed exactly as the single calls are: an
 * HaClient interprets each part's status and body with the code its single methods use. A
 * failure of the whole request (a timeout, a 401, a 503 without parts) is thrown.
 */
export interface ParticipantTransport {
  /** Sends every part of one participant in one request (POST /api/heartbeat); resolves with each part's result. */
  participantHeartbeat(body: ParticipantHeartbeatBody, options?: CallOptions): Promise<ParticipantResults>;
}

/** True when `value` can send participant heartbeats. */
export function isParticipantTransport(value: unknown): value is ParticipantTransport {
  return typeof (value as Partial<ParticipantTransport> | null | undefined)?.participantHeartbeat === "function";
}
