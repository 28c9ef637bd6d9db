import { operations } from "../../functions/routes.js";
import { startLocalHost, type LocalHost, type LocalHostOptions } from "../../shared/host/local-host.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";

export interface TestHost {
  readonly host: LocalHost;
  readonly port: number;
  /** What the host logged, as "level: message". */
  readonly logs: string[];
  close(): Promise<void>;
}

/**
 * The local host in this process on 127.0.0.1, over the real route table and memory
 * stores (leases and members): for focused tests of the HTTP layer, which the store does
 * not change.
 */
export async function startTestHost(options: Partial<LocalHostOptions> = {}): Promise<TestHost> {
  const logs: string[] = [];
  const runtime: Runtime = createRuntime({ timing: { intervalMs: 1000, timeoutMs: 5000 }, storeTimeoutMs: 2000, leaseSecret: "a-test-secret-that-is-long-enough-for-hmac" }, { leases: new MemoryLeaseStore(), members: new MemoryMemberStore() });
  const host = await startLocalHost({
    operations,
    runtime: async () => runtime,
    port: 0,
    log: (level, message) => logs.push(`${level}: ${message}`),
    ...options,
  });
  return { host, port: Number(new URL(host.url).port), logs, close: () => host.close() };
}
