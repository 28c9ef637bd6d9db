import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { Probe, ProbeResult } from "./health-check.js";

/** What a check may say: the first 4096 bytes of its output are kept, as Docker keeps them. */
export const HEALTH_OUTPUT_LIMIT = 4096;
/** After the check's first process exits, how long its output pipes may stay open (a leftover holding them) before it counts as done. */
const DRAIN_MS = 100;

/**
 * The check of `run --health-cmd CMD`, as Docker's CMD-SHELL form runs it: `sh -c CMD`,
 * with the environment of the command's term (HA_UTYPE, HA_UUID, HA_EPOCH, HA_CHECK_URL),
 * as the leader of a process group of its own, so that aborting it (the timeout, the term's
 * end) SIGKILLs everything it started. Its stdin is /dev/null; its stdout and stderr are
 * kept together, up to HEALTH_OUTPUT_LIMIT bytes.
 */
export function shellProbe(command: string, env: Record<string, string | undefined>): Probe {
  return (signal) =>
    new Promise<ProbeResult>((resolve) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      const keep = (chunk: Buffer): void => {
        if (kept >= HEALTH_OUTPUT_LIMIT) return;
        const part = chunk.subarray(0, HEALTH_OUTPUT_LIMIT - kept);
        chunks.push(part);
        kept += part.length;
      };
      const child = spawn("sh", ["-c", command], { detached: true, stdio: ["ignore", "pipe", "pipe"], env });
      const kill = (): void => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // ESRCH: the group is gone already.
        }
      };
      let done = false;
      const finish = (exitCode: number, extra = ""): void => {
        if (done) return;
        done = true;
        signal.removeEventListener("abort", kill);
        child.stdout?.destroy();
        child.stderr?.destroy();
        resolve({ exitCode, output: Buffer.concat(chunks).toString("utf8") + extra });
      };
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
      child.once("error", (error) => finish(127, error.message));
      child.once("exit", (code, killedBy) => {
        const exitCode = code ?? 128 + (killedBy === null ? 0 : (constants.signals[killedBy] ?? 0));
        // The output may still be on its way: wait for the pipes, but not for a leftover of
        // the group that holds them open. That leftover is a member still (so the group id
        // cannot have been reused): it is killed, a check leaves nothing behind.
        const drained = setTimeout(() => {
          kill();
          finish(exitCode);
        }, DRAIN_MS);
        child.once("close", () => {
          clearTimeout(drained);
          finish(exitCode);
        });
      });
      if (signal.aborted) kill();
      else signal.addEventListener("abort", kill, { once: true });
    });
}
