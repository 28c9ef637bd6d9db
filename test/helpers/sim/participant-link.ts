import type { MemberHeartbeatBody, MemberHeartbeatResult, MemberLeaveResult, MemberList } from "../../../shared/contract/members.js";
import type { ParticipantHeartbeatBody, ParticipantResults, PartResult } from "../../../shared/contract/participant.js";
import type { LeaseService } from "../../../shared/lease/lease-service.js";
import { participantHeartbeat } from "../../../shared/participant/participant-service.js";
import { HaRequestError } from "../../../shared/sdk/transport/ha-request-error.js";
import type { CallOptions } from "../../../shared/sdk/transport/lease-transport.js";
import type { MembersTransport } from "../../../shared/sdk/transport/members-transport.js";
import type { ParticipantTransport } from "../../../shared/sdk/transport/participant-transport.js";
import { SimTransport } from "./network.js";

/**
 * The link of a participant that holds several parts (roles, a member session, a group
 * watch) to the service: its single calls travel as SimTransport's do, and a participant
 * heartbeat travels as ONE message (lost, delayed, duplicated, answered 503 by a gateway as
 * a whole) to one function instance, which runs the service-level participantHeartbeat
 * there: every part on the request's one arrival, each answering for itself.
 */
export class SimParticipantTransport extends SimTransport implements MembersTransport, ParticipantTransport {
  memberHeartbeat(group: string, member: string, body: MemberHeartbeatBody, options?: CallOptions): Promise<MemberHeartbeatResult> {
    return this.send((_service, arrival, members) => members().heartbeat({ group, member, ...body }, arrival), options);
  }

  leaveGroup(group: string, member: string, session: string, options?: CallOptions): Promise<MemberLeaveResult> {
    return this.send((_service, arrival, members) => members().leave({ group, member, session }, arrival), options);
  }

  listMembers(group: string, options?: CallOptions): Promise<MemberList> {
    return this.send((_service, arrival, members) => members().list(group, arrival), options);
  }

  /**
   * The renewals it carries are not recorded for the `ride-through` invariant (network.ts
   * records a single route's): the SDK's batcher gives each part a timeout of its own, so a
   * batch's answer may reach a part that has already given up on it, and from here that
   * cannot be told from an answer the elector read.
   */
  participantHeartbeat(body: ParticipantHeartbeatBody, options?: CallOptions): Promise<ParticipantResults> {
    const roles = body.roles ?? [];
    const sentAt = roles.map((part) => this.renewals().sent(part.uuid, part.lease !== undefined));
    return this.send(async (service, arrival, members) => {
      this.stats().count("participantHeartbeats");
      // The route's service, with this link's counts and plants on its heartbeats (the function needs only these two calls).
      const withPlants = this.withPlants(service, arrival) as unknown as LeaseService;
      const results = await participantHeartbeat({ service: withPlants, members: members() }, body, this.partsArrival(arrival));
      // Each part answers as its own route would: a store failure is its 503, anything else a bug (a 500).
      const answered = <T>(list: readonly PartResult<T>[]): PartResult<T>[] =>
        list.map((result) => (result.ok ? { ok: true, value: this.inflate(result.value) } : { ok: false, error: this.asAnswer(result.error) }));
      return { roles: answered(results.roles), reads: answered(results.reads), members: answered(results.members), groups: answered(results.groups) };
    }, options, body.roles?.some((role) => role.lease !== undefined) === true, (results) => {
      results.roles.forEach((result, index) => {
        if (result.ok && result.value.outcome === "accepted") this.renewals().accepted(roles[index]!.uuid, sentAt[index]!);
      });
      if ([results.roles, results.reads, results.members, results.groups].some((list) => list.some((result) => !result.ok))) this.partFailed();
    });
  }

  /** A part's error as the client would get it: 503 StoreUnavailable; a service bug is reported as one. */
  asAnswer(error: unknown): HaRequestError {
    this.reportIfBug(error);
    return new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503);
  }
}
