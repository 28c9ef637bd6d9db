import type { CommandProcess, LeaderExit, Lifeline, ProcessGroups } from "../../shared/cli/supervise/child-supervisor.js";
import type { FakeClock } from "./fake-clock.js";

/** How a fake command's group answers signals. */
export interface GroupBehaviour {
  /** `exit`: every member dies on SIGTERM; `leader-only`: only the leader does (a shell in front); `ignore`: nobody does. */
  readonly onTerm: "exit" | "leader-only" | "ignore";
  /** Members besides the leader (children that share its group). */
  readonly extraMembers?: number;
}

export interface SignalRecord {
  readonly at: number;
  readonly pgid: number;
  readonly signal: "SIGTERM" | "SIGKILL";
}

/** One command's group: the leader plus members, each alive until a signal or the test ends it. */
export class FakeGroup {
  readonly members = new Set<string>(["leader"]);
  readonly exitListeners: ((exit: LeaderExit) => void)[] = [];
  stdinClosedAt: number | undefined;
  lifeline: FakeLifeline | undefined;
  /** Whether a watchdog had been started when the command was let run (undefined until then). */
  releasedWithLifeline: boolean | undefined;

  constructor(
    readonly pgid: number,
    readonly env: Record<string, string | undefined>,
    readonly behaviour: GroupBehaviour,
  ) {
    for (let n = 1; n <= (behaviour.extraMembers ?? 0); n++) this.members.add(`member-${n}`);
  }

  /** The leader exits; listeners hear it a tick later, as from a real child process. */
  leaderExits(code: number | null, signal: NodeJS.Signals | null): void {
    if (!this.members.delete("leader")) return;
    queueMicrotask(() => {
      for (const listener of this.exitListeners) listener({ code, signal });
    });
  }

  /** A member other than the leader exits. */
  memberExits(name: string): void {
    this.members.delete(name);
  }
}

export class FakeLifeline implements Lifeline {
  readonly killAts: { readonly at: number; readonly killAt: number }[] = [];
  readonly lostListeners: ((exit: { code: number | null; signal: NodeJS.Signals | null }) => void)[] = [];
  disarmed = false;

  constructor(
    readonly pid: number,
    private readonly clock: FakeClock,
    killAt: number,
  ) {
    this.killAts.push({ at: clock.now(), killAt });
  }

  get lastKillAt(): number {
    return this.killAts.at(-1)!.killAt;
  }

  killAt(at: number): void {
    this.killAts.push({ at: this.clock.now(), killAt: at });
  }

  disarm(): void {
    this.disarmed = true;
  }

  onLost(listener: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void): void {
    this.lostListeners.push(listener);
  }

  /** The watchdog process dies while armed. */
  die(signal: NodeJS.Signals): void {
    for (const listener of this.lostListeners) listener({ code: null, signal });
  }

  /** The watchdog fired (the test kills the group) and exits 0, as watchdog.ts does. */
  firedAndExited(): void {
    for (const listener of this.lostListeners) listener({ code: 0, signal: null });
  }
}

/**
 * Process groups on a fake clock: spawns succeed (unless `failSpawn`), signals are recorded
 * with the time they were sent, and groups behave as `behaviour` says.
 */
export class FakeProcessGroups implements ProcessGroups {
  readonly spawned: FakeGroup[] = [];
  readonly signals: SignalRecord[] = [];
  behaviour: GroupBehaviour = { onTerm: "exit" };
  failSpawn: Error | undefined;
  #nextPid = 101;

  constructor(private readonly clock: FakeClock) {}

  get last(): FakeGroup {
    return this.spawned.at(-1)!;
  }

  spawn(_command: string, _args: readonly string[], env: Record<string, string | undefined>): CommandProcess {
    if (this.failSpawn !== undefined) {
      const error = this.failSpawn;
      return { pid: undefined, onExit: (listener) => queueMicrotask(() => listener({ code: null, signal: null, error })), closeStdin: () => undefined, release: () => undefined };
    }
    const group = new FakeGroup(this.#nextPid, env, this.behaviour);
    this.#nextPid += 2;
    this.spawned.push(group);
    return {
      pid: group.pgid,
      onExit: (listener) => void group.exitListeners.push(listener),
      closeStdin: () => {
        group.stdinClosedAt ??= this.clock.now();
      },
      release: () => {
        group.releasedWithLifeline ??= group.lifeline !== undefined;
      },
    };
  }

  startLifeline(pgid: number, killAt: number): Lifeline {
    const group = this.#group(pgid);
    group.lifeline = new FakeLifeline(pgid + 1, this.clock, killAt);
    return group.lifeline;
  }

  signal(pgid: number, signal: "SIGTERM" | "SIGKILL"): void {
    this.signals.push({ at: this.clock.now(), pgid, signal });
    const group = this.#group(pgid);
    if (signal === "SIGKILL") {
      for (const member of [...group.members]) if (member !== "leader") group.memberExits(member);
      group.leaderExits(null, "SIGKILL");
    } else if (group.behaviour.onTerm !== "ignore") {
      if (group.behaviour.onTerm === "exit") for (const member of [...group.members]) if (member !== "leader") group.memberExits(member);
      group.leaderExits(null, "SIGTERM");
    }
  }

  hasLiveMember(pgid: number): boolean {
    return this.#group(pgid).members.size > 0;
  }

  #group(pgid: number): FakeGroup {
    const group = this.spawned.find((g) => g.pgid === pgid);
    if (group === undefined) throw new Error(`no fake group ${pgid}`);
    return group;
  }
}
