import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, isRunning } from "../helpers/sdk-cli-process.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * The reader of `elect`'s, `run`'s or `members --watch`'s JSON lines goes away (`… | head -1`,
 * a log shipper that dies): the next event line fails with EPIPE. The process must stop as
 * on SIGTERM (command stopped, lease released) and exit 1, not crash and leave the lease to
 * expire.
 */
const I = 200;
const T = 2000;

const WORKER = "console.error(`worker up pid=${process.pid}`); process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 1000);";

// The tests run side by side (each its own role or group, and processes): most of their time
// is waiting for a lease to expire.
describe("elect, run and members --watch: a closed stdout stops them cleanly", { concurrent: true }, () => {
  let service: ServiceProcess;
  const processes: CliProcess[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ HA_INTERVAL_MS: String(I), HA_TIMEOUT_MS: String(T) });
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await service?.stop();
  });

  /** `ha-module <command> <utype> --endpoint … [rest…]` */
  const cli = (name: string, [command, utype, ...rest]: string[]): CliProcess => {
    const p = new CliProcess(name, [command!, utype!, "--endpoint", service.url, ...rest]);
    processes.push(p);
    return p;
  };

  /**
   * A holder, and a standby whose stdout reader then goes away. The holder is killed, so
   * the standby's next event line (its takeover, usually `elected`) meets EPIPE.
   */
  async function standbyLosesItsReader(utype: string, standbyArgs: string[]): Promise<CliProcess> {
    const holder = cli(`${utype}-holder`, ["elect", utype]);
    await holder.waitFor((e) => e.event === "elected");
    const standby = cli(`${utype}-standby`, standbyArgs);
    await standby.waitFor((e) => e.event === "primaryChanged" && e["primary"] !== null);
    standby.closeStdout();
    holder.signal("SIGKILL");
    return standby;
  }

  async function primaryOf(utype: string): Promise<unknown> {
    const view = (await (await fetch(`${service.url}/primary/${utype}`)).json()) as { primary: unknown };
    return view.primary;
  }

  it("elect: exits 1 with a message instead of crashing, and leaves the lease free", async () => {
    const utype = "e2e-epipe-elect";
    const standby = await standbyLosesItsReader(utype, ["elect", utype]);
    expect(await standby.exited).toEqual({ code: 1, signal: null });
    expect(standby.stderr).toMatch(/stdout is closed/);
    expect(standby.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(await primaryOf(utype)).toBeNull();
  });

  it("run: stops the command, releases the lease and exits 1", async () => {
    const utype = "e2e-epipe-run";
    const standby = await standbyLosesItsReader(utype, ["run", utype, "--", process.execPath, "-e", WORKER]);
    expect(await standby.exited).toEqual({ code: 1, signal: null });
    expect(standby.stderr).toMatch(/stdout is closed/);
    expect(standby.stderr).not.toMatch(/\n\s+at /);
    expect(await primaryOf(utype)).toBeNull();
    // Whether or not the command got to start before the EPIPE, nothing of it is left.
    for (const [, pid] of standby.stderr.matchAll(/worker up pid=(\d+)/g)) expect(isRunning(Number(pid))).toBe(false);
  });

  it("members --watch: exits 1 with a message instead of crashing", async () => {
    const group = "e2e-epipe-watch";
    const watcher = new CliProcess("watch", ["members", group, "--watch", "--endpoint", service.url]);
    processes.push(watcher);
    const join = (member: string): CliProcess => {
      const joining = new CliProcess(member, ["join", group, "--member", member, "--endpoint", service.url]);
      processes.push(joining);
      return joining;
    };
    join("a");
    await watcher.waitFor((e) => e.event === "memberJoined" && e["member"] === "a");
    watcher.closeStdout();
    // The next event line (b joining, a turning active) meets EPIPE.
    join("b");
    expect(await watcher.exited).toEqual({ code: 1, signal: null });
    expect(watcher.stderr).toMatch(/ha-module members: stdout is closed \(.*\); stopping the watch\./);
    expect(watcher.stderr).not.toMatch(/\n\s+at /);
  });
});
