import { expect } from "vitest";
import type { MemberAnswer, MemberHeartbeatBody, MemberHeartbeatResult, MemberLeaveResult, MemberList, MemberView } from "../../shared/contract/members.js";
import type { TimerHandle } from "../../shared/sdk/loop/elector-clock.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import type { CallOptions } from "../../shared/sdk/transport/lease-transport.js";
import type { MembersTransport } from "../../shared/sdk/transport/members-transport.js";
import type { FakeClock } from "./fake-clock.js";

export const MI = 200;
export const MT = 1000;
export const MTTL = 3000;
export const MEMBER_TIMING = { intervalMs: MI, timeoutMs: MT, ttlMs: MTTL };

export function memberView(view: Partial<MemberView> & { member: string; session: string }): MemberView {
  return {
    address: null,
    state: "active",
    joinedAt: new Date(0).toISOString(),
    renewedAt: new Date(0).toISOString(),
    leftAt: null,
    heartbeats: 2,
    ageMs: 0,
    previous: null,
    ...view,
  };
}

export function memberAnswer(group: string, member: MemberView | null): MemberAnswer {
  return { group, member, ...MEMBER_TIMING };
}

export function memberList(group: string, members: MemberView[]): MemberList {
  return { group, members, ...MEMBER_TIMING };
}

type Method = "memberHeartbeat" | "leaveGroup" | "listMembers";

export interface PendingMemberCall {
  readonly method: Method;
  readonly group: string;
  readonly member: string | undefined;
  readonly body: MemberHeartbeatBody | undefined;
  readonly session: string | undefined;
  readonly options: CallOptions;
  /** The fake clock's time when the call was made. */
  readonly sentAt: number;
  respond(value: MemberHeartbeatResult | MemberLeaveResult | MemberList): void;
  fail(error: Error): void;
}

/**
 * A members transport whose every call waits for the test to answer it, and which fails the
 * test on any call it did not take (so the number of calls is pinned), as ScriptedTransport
 * does for leases. Timeouts run on the fake clock; aborts reject with the signal's reason.
 */
export class ScriptedMembersTransport implements MembersTransport {
  readonly #queue: PendingMemberCall[] = [];

  constructor(private readonly clock: FakeClock) {}

  memberHeartbeat(group: string, member: string, body: MemberHeartbeatBody, options: CallOptions = {}): Promise<MemberHeartbeatResult> {
    return this.#enqueue("memberHeartbeat", group, member, body, undefined, options) as Promise<MemberHeartbeatResult>;
  }

  leaveGroup(group: string, member: string, session: string, options: CallOptions = {}): Promise<MemberLeaveResult> {
    return this.#enqueue("leaveGroup", group, member, undefined, session, options) as Promise<MemberLeaveResult>;
  }

  listMembers(group: string, options: CallOptions = {}): Promise<MemberList> {
    return this.#enqueue("listMembers", group, undefined, undefined, undefined, options) as Promise<MemberList>;
  }

  take(method: Method): PendingMemberCall {
    const call = this.#queue.shift();
    expect(call, `expected a ${method} call, but none was made`).toBeDefined();
    expect(call!.method, `expected ${method}, got ${call!.method}`).toBe(method);
    return call!;
  }

  /** Every call not yet taken, oldest first; they are taken. */
  drain(): PendingMemberCall[] {
    return this.#queue.splice(0);
  }

  expectIdle(): void {
    expect(this.#queue.map((call) => call.method)).toEqual([]);
  }

  #enqueue(method: Method, group: string, member: string | undefined, body: MemberHeartbeatBody | undefined, session: string | undefined, options: CallOptions): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer: TimerHandle | undefined;
      const finish = (action: () => void): void => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) this.clock.clearTimeout(timer);
        options.abortSignal?.removeEventListener("abort", onAbort);
        action();
      };
      const onAbort = (): void => finish(() => reject(options.abortSignal!.reason));
      if (options.timeoutInMs !== undefined) {
        timer = this.clock.setTimeout(() => finish(() => reject(new HaRequestError(`${method}: no answer within ${options.timeoutInMs} ms`, "Timeout", undefined))), options.timeoutInMs);
      }
      options.abortSignal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push({
        method,
        group,
        member,
        body,
        session,
        options,
        sentAt: this.clock.now(),
        respond: (value) => finish(() => resolve(value)),
        fail: (error) => finish(() => reject(error)),
      });
    });
  }
}
