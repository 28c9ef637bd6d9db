import type { MemberView } from "../../contract/members.js";
import type { ElectorClock } from "../loop/elector-clock.js";
import { MemberSession } from "../membership/member-session.js";
import { MembersWatcher } from "../membership/members-watcher.js";
import { isMembersTransport, type MembersTransport } from "../transport/members-transport.js";
import { checkId, checkOptionsObject } from "../loop/option-checks.js";

/** PrimaryElector's `membership` option: also be a member of a group, and watch it. */
export interface ElectorMembershipOptions {
  /** This participant's stable name in the group. */
  readonly member: string;
  /** The group; the elector's utype by default. */
  readonly group?: string;
}

/**
 * Leader and members from one object (docs/membership.md#the-sdk-and-the-cli): the elector answers who leads, this
 * answers who is in the group and who has failed. `session` heartbeats the participant's
 * own row; `watcher` polls the group and emits memberJoined … memberRemoved. The elector
 * starts both with start() and stops both (goodbye included) in stop().
 */
export class ElectorMembership {
  /** This participant's own session in the group. */
  readonly session: MemberSession;
  /** The watcher of the group, whose events tell who joined and who failed. */
  readonly watcher: MembersWatcher;

  constructor(options: ElectorMembershipOptions, context: { utype: string; address: string | undefined; transport: unknown; clock: ElectorClock | undefined; retryDelayInMs: number | undefined }) {
    checkOptionsObject("`membership`", options, '{ member: "node-1" }');
    const group = options.group === undefined ? context.utype : checkId("membership.group", options.group);
    const member = checkId("membership.member", options.member);
    if (!isMembersTransport(context.transport)) {
      throw new TypeError("Expected the elector's `transport` to implement MembersTransport (memberHeartbeat, leaveGroup, listMembers) when `membership` is set, e.g. an HaClient.");
    }
    const transport: MembersTransport = context.transport;
    const shared = { group, transport, ...(context.clock === undefined ? {} : { clock: context.clock }), ...(context.retryDelayInMs === undefined ? {} : { retryDelayInMs: context.retryDelayInMs }) };
    this.session = new MemberSession({ ...shared, member, ...(context.address === undefined ? {} : { address: context.address }) });
    this.watcher = new MembersWatcher(shared);
  }

  /** The group: the `group` option, or the elector's utype. */
  get group(): string {
    return this.watcher.group;
  }

  /** The group's members as the last poll saw them. */
  members(): readonly MemberView[] {
    return this.watcher.members();
  }

  /** Starts the session and the watcher; the elector calls it from its own start(). */
  start(): void {
    this.session.start();
    this.watcher.start();
  }

  /** Says goodbye and stops watching; resolves once both are done. The elector calls it from its own stop(). */
  async stop(): Promise<void> {
    await Promise.all([this.session.stop(), this.watcher.stop()]);
  }
}
