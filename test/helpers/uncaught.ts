/**
 * Runs `body` with this process's 'uncaughtException' listeners (vitest's among them)
 * set aside, and returns what reached 'uncaughtException' meanwhile. For code that must
 * let an error escape the way Node's EventEmitter does, rather than drop it.
 */
export async function collectUncaught(body: () => Promise<void>): Promise<unknown[]> {
  const saved = process.listeners("uncaughtException");
  process.removeAllListeners("uncaughtException");
  const caught: unknown[] = [];
  const onUncaught = (error: unknown): void => void caught.push(error);
  process.on("uncaughtException", onUncaught);
  try {
    await body();
    // An error rethrown "later" is thrown from a microtask; let every one of them run.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("uncaughtException", onUncaught);
    for (const listener of saved) process.on("uncaughtException", listener);
  }
  return caught;
}
