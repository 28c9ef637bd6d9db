import type { ParticipantHeartbeatBody, ParticipantResults, PartResult } from "../../shared/contract/participant.js";
import type { MemberHeartbeatBody, MemberHeartbeatResult, MemberLeaveResult, MemberList } from "../../shared/contract/members.js";
import { LeaseService } from "../../shared/lease/lease-service.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import { MemberService } from "../../shared/members/member-service.js";
import { MemberTokenSigner } from "../../shared/members/member-token.js";
import { defaultMembershipRules } from "../../shared/members/membership-rules.js";
import { participantHeartbeat, type ParticipantServices } from "../../shared/participant/participant-service.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, ReleaseOptions, ReleaseResult } from "../../shared/sdk/index.js";
import type { MembersTransport } from "../../shared/sdk/transport/members-transport.js";
import type { ParticipantTransport } from "../../shared/sdk/transport/participant-transport.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import type { FakeClock } from "./fake-clock.js";
import { I, T } from "./sdk-fakes.js";

const WALL = Date.UTC(2026, 10, 26);

/** The real lease and member services over memory stores, on the fake clock. */
export function memoryServices(clock: FakeClock): ParticipantServices {
  const wall = { now: () => WALL + clock.now() };
  const timing = { intervalMs: I, timeoutMs: T };
  return {
    service: new LeaseService({ store: new MemoryLeaseStore(), clock: wall, monotonic: clock, timing, tokens: new LeaseTokenSigner("a-test-secret-that-is-long-enough-for-hmac"), storeTimeoutMs: 2000 }),
    members: new MemberService({ store: new MemoryMemberStore(), clock: wall, monotonic: clock, rules: defaultMembershipRules(timing), tokens: new MemberTokenSigner(), storeTimeoutMs: 2000 }),
  };
}

/** One request as it left the participant: when (fake clock), which route, and the participant heartbeat's body. */
export interface SentRequest {
  readonly at: number;
  readonly route: string;
  readonly body?: ParticipantHeartbeatBody;
  /** An UpdateHeartBeat through its own route: its utype and body. */
  readonly heartbeat?: HeartbeatBody & { readonly utype: string };
}

type PartKind = keyof ParticipantResults;

/**
 * A participant's transport over the real services (the simulation's service-side function
 * for participant heartbeats), answering at once, with every request it was asked to send
 * recorded: the requests per I are counted here. Faults on demand: a part answered 503
 * (`failPart`), a whole batch failed at once (`failBatch`), a request lost, never
 * answered (`lose`), every batch applied twice (`duplicate`).
 */
export class ParticipantServiceTransport implements LeaseTransport, MembersTransport, ParticipantTransport {
  readonly sent: SentRequest[] = [];
  /** Return an error to fail the part named (a utype, group/member, or group) in the next batches. */
  failPart: ((kind: PartKind, name: string) => Error | undefined) | undefined;
  /** Return an error to fail the whole next batch (lost: nothing reached the service). */
  failBatch: (() => Error | undefined) | undefined;
  /** Return true to lose a heartbeat (batched or single): it never reaches the service and is never answered (its calls end on their own budgets). */
  lose: ((request: SentRequest) => boolean) | undefined;
  /** Every batch reaches the service twice (a duplicate on the network); the participant sees one answer. */
  duplicate = false;
  /** How long each answer takes to come back, on the fake clock. */
  roundTripMs = 0;

  constructor(
    readonly clock: FakeClock,
    readonly services: ParticipantServices = memoryServices(clock),
  ) {}

  /** The requests sent in [from, to) on the fake clock. */
  between(from: number, to: number): SentRequest[] {
    return this.sent.filter((request) => request.at >= from && request.at < to);
  }

  getPrimary(utype: string, _options?: CallOptions): Promise<LeaseView> {
    this.#record("GetPrimary");
    return this.#answer(this.services.service.getPrimary(utype));
  }

  heartbeat(utype: string, body: HeartbeatBody, options?: CallOptions): Promise<HeartbeatResult> {
    if (this.#lost({ at: this.clock.now(), route: "UpdateHeartBeat", heartbeat: { utype, ...body } })) return never(options);
    return this.#answer(this.services.service.heartbeat({ utype, ...body }));
  }

  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult> {
    this.#record("Release");
    return this.#answer(this.services.service.release({ utype, uuid, lease: options?.lease }));
  }

  memberHeartbeat(group: string, member: string, body: MemberHeartbeatBody, _options?: CallOptions): Promise<MemberHeartbeatResult> {
    this.#record("MemberHeartbeat");
    return this.#answer(this.services.members.heartbeat({ group, member, ...body }));
  }

  leaveGroup(group: string, member: string, session: string, _options?: CallOptions): Promise<MemberLeaveResult> {
    this.#record("LeaveGroup");
    return this.#answer(this.services.members.leave({ group, member, session }));
  }

  listMembers(group: string, _options?: CallOptions): Promise<MemberList> {
    this.#record("ListMembers");
    return this.#answer(this.services.members.list(group));
  }

  async participantHeartbeat(body: ParticipantHeartbeatBody, options?: CallOptions): Promise<ParticipantResults> {
    if (this.#lost({ at: this.clock.now(), route: "ParticipantHeartbeat", body })) return never(options);
    const lost = this.failBatch?.();
    if (lost !== undefined) throw lost;
    if (this.duplicate) await participantHeartbeat(this.services, body);
    const results = await participantHeartbeat(this.services, body);
    const named = <T>(kind: PartKind, names: readonly string[], list: readonly PartResult<T>[]): PartResult<T>[] =>
      list.map((result, index) => {
        const error = this.failPart?.(kind, names[index]!);
        if (error !== undefined) return { ok: false, error };
        // A service error is what the route would answer 503 for.
        return result.ok || result.error instanceof HaRequestError ? result : { ok: false, error: new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503) };
      });
    await this.#answer(undefined);
    return {
      roles: named("roles", (body.roles ?? []).map((part) => part.utype), results.roles),
      reads: named("reads", (body.reads ?? []).map((part) => part.utype), results.reads),
      members: named("members", (body.members ?? []).map((part) => `${part.group}/${part.member}`), results.members),
      groups: named("groups", (body.groups ?? []).map((part) => part.group), results.groups),
    };
  }

  /** The service's answer, roundTripMs later. */
  async #answer<T>(answer: T | Promise<T>): Promise<T> {
    const value = await answer;
    if (this.roundTripMs > 0) await new Promise<void>((arrived) => this.clock.setTimeout(arrived, this.roundTripMs));
    return value;
  }

  #record(route: string, body?: ParticipantHeartbeatBody): void {
    this.sent.push({ at: this.clock.now(), route, ...(body === undefined ? {} : { body }) });
  }

  /** Records a heartbeat; whether it is to be lost. */
  #lost(request: SentRequest): boolean {
    this.sent.push(request);
    return this.lose?.(request) === true;
  }
}

/** A request never answered: only its own signal (its budget, or every call in a batch settled) ends it. */
function never<T>(options: CallOptions | undefined): Promise<T> {
  return new Promise((_, reject) => options?.abortSignal?.addEventListener("abort", () => reject(options.abortSignal!.reason as Error), { once: true }));
}
