import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FencedOutError, FencedWriteContendedError, type FencedWriteResult } from "../../shared/sdk/index.js";

/** The two kinds of store call a fenced write makes: the read with its check, and the conditional write. */
export type Step = "read" | "write";

/** Runs one store call of a fenced write; tests wrap it to pause, order or race the calls. */
export type Around = <T>(step: Step, call: () => Promise<T>) => Promise<T>;

export const direct: Around = (_step, call) => call();

/** One resource (entity, blob, item) on a real store, written through the SDK's fenced writer. */
export interface FencedResource {
  /** The fenced write of `value` at `epoch`, its store calls passed through `around`. */
  write(value: string, epoch: number, options?: { around?: Around; maxAttempts?: number }): Promise<FencedWriteResult>;
  /** The resource as stored, read with the user's client: its value and epoch mark. */
  read(): Promise<{ value: string; epoch: unknown } | undefined>;
  /** Writes the resource with the user's client, bypassing the fence: `mark` undefined leaves no mark. */
  writeUnfenced(value: string, mark: string | number | undefined): Promise<void>;
  /** How FencedOutError names it. */
  readonly resourcePattern: RegExp;
}

export interface FencedStoreTarget {
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  /** A resource that does not exist yet; called once per test. */
  fresh(): Promise<FencedResource>;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * Lets store calls through in a scripted order: each writer's first calls follow `script`
 * (e.g. ["old:read", "new:read", "new:write", "old:write"]), each waiting until the calls
 * before it in the script have been answered; calls beyond a writer's part of the script (the
 * retries after a lost race) go at once.
 */
function scheduler(script: readonly string[]): (writer: string) => Around {
  let next = 0;
  const turns = script.map(() => deferred());
  turns[0]?.resolve();
  const seen = new Map<string, number>();
  return (writer) => async (step, call) => {
    const index = seen.get(writer) ?? 0;
    seen.set(writer, index + 1);
    const position = script.map((entry, at) => ({ entry, at })).filter(({ entry }) => entry.startsWith(`${writer}:`))[index];
    if (position === undefined) return call();
    expect(position.entry).toBe(`${writer}:${step}`);
    await turns[position.at]!.promise;
    try {
      return await call();
    } finally {
      next = position.at + 1;
      turns[next]?.resolve();
    }
  };
}

/** A seeded generator, so a failing race can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Holds a call back for 0–3 turns of the event loop or 0–4 ms, at random. */
function jitter(draw: () => number): Around {
  return async (_step, call) => {
    const roll = draw();
    if (roll < 0.5) for (let turn = Math.floor(roll * 8); turn > 0; turn -= 1) await new Promise<void>((resolve) => setImmediate(resolve));
    else await new Promise<void>((resolve) => setTimeout(resolve, Math.floor((roll - 0.5) * 8)));
    return call();
  };
}

const OLD = 4;
const NEW = 5;

/**
 * What a fenced write promises (docs/fencing.md), run unchanged against each store: Table
 * entities and blobs on Azurite, Cosmos items on the Cosmos emulator.
 */
export function describeFencedWrites(name: string, target: FencedStoreTarget): void {
  describe(`fenced writes: ${name}`, () => {
    beforeAll(() => target.setUp());
    afterAll(() => target.tearDown());

    it("the first write creates the resource, marked with its epoch: one read, one write", async () => {
      const resource = await target.fresh();
      const steps: Step[] = [];
      const result = await resource.write("first", OLD, { around: (step, call) => (steps.push(step), call()) });
      expect(result).toEqual({ created: true, previousEpoch: undefined, attempts: 1, etag: expect.any(String) });
      expect(steps).toEqual(["read", "write"]);
      expect(await resource.read()).toEqual({ value: "first", epoch: OLD });
    });

    it("the same epoch writes again: one term rewriting its own data", async () => {
      const resource = await target.fresh();
      await resource.write("one", OLD);
      const again = await resource.write("two", OLD);
      expect(again).toMatchObject({ created: false, previousEpoch: OLD, attempts: 1 });
      expect(await resource.read()).toEqual({ value: "two", epoch: OLD });
    });

    it("a higher epoch writes and raises the mark", async () => {
      const resource = await target.fresh();
      await resource.write("old", OLD);
      expect(await resource.write("new", NEW)).toMatchObject({ created: false, previousEpoch: OLD });
      expect(await resource.read()).toEqual({ value: "new", epoch: NEW });
    });

    it("a lower epoch is refused with FencedOutError naming the resource and both epochs, and changes nothing", async () => {
      const resource = await target.fresh();
      await resource.write("new", NEW);
      const refused = await resource.write("stale", OLD).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(FencedOutError);
      expect(refused).toMatchObject({ epoch: OLD, storedEpoch: NEW, resource: expect.stringMatching(resource.resourcePattern) });
      expect((refused as Error).message).toMatch(/at epoch 4 was refused: epoch 5 has written it/);
      expect(await resource.read()).toEqual({ value: "new", epoch: NEW });
    });

    it("epochs of the service's clock (ms, past 2^31 and 2^32) mark and compare exactly: a counter epoch's resource is raised by one, and the counter epoch is refused after", async () => {
      // What a role upgraded to epochs floored by the clock (docs/design/epochs.md) writes:
      // its last counter epoch, then the first epochs of the clock, 16 ms apart at least.
      const CLOCK = 1_795_168_800_004;
      const resource = await target.fresh();
      await resource.write("counter", OLD);
      expect(await resource.write("clock", CLOCK)).toMatchObject({ created: false, previousEpoch: OLD });
      expect(await resource.read()).toEqual({ value: "clock", epoch: CLOCK });
      expect(await resource.write("clock-next", CLOCK + 16)).toMatchObject({ previousEpoch: CLOCK });
      const refused = await resource.write("stale", CLOCK).catch((error: unknown) => error);
      expect(refused).toMatchObject({ epoch: CLOCK, storedEpoch: CLOCK + 16 });
      await expect(resource.write("older", OLD)).rejects.toBeInstanceOf(FencedOutError);
      expect(await resource.read()).toEqual({ value: "clock-next", epoch: CLOCK + 16 });
    });

    for (const existing of [true, false]) {
      it(`a paused old primary whose write arrives after the new primary's is refused (${existing ? "resource it wrote before" : "resource it was creating"})`, async () => {
        const resource = await target.fresh();
        if (existing) await resource.write("old term, first write", OLD);
        // The old primary has read the resource and checked the mark, then stalls (GC, SIGSTOP) before its write goes out.
        const paused = deferred();
        const resume = deferred();
        const steps: Step[] = [];
        const stalling: Around = async (step, call) => {
          steps.push(step);
          if (step === "write" && steps.length === 2) {
            paused.resolve();
            await resume.promise;
          }
          return call();
        };
        const oldWrite = resource.write("old term, delayed write", OLD, { around: stalling }).catch((error: unknown) => error);
        await paused.promise;
        // Meanwhile its lease ran out and the new primary wrote.
        await resource.write("new term", NEW);
        resume.resolve();
        const refused = await oldWrite;
        expect(refused).toBeInstanceOf(FencedOutError);
        expect(refused).toMatchObject({ epoch: OLD, storedEpoch: NEW });
        // Its conditional write lost, it read again and saw the newer mark.
        expect(steps).toEqual(["read", "write", "read"]);
        expect(await resource.read()).toEqual({ value: "new term", epoch: NEW });
      });
    }

    // Every order of the two writers' read and write reaching the store; the old write is refused
    // exactly when it would land after the new one, and it never lands after it.
    const interleavings: Array<{ script: string[]; oldRefused: boolean }> = [
      { script: ["old:read", "old:write", "new:read", "new:write"], oldRefused: false },
      { script: ["old:read", "new:read", "old:write", "new:write"], oldRefused: false },
      { script: ["old:read", "new:read", "new:write", "old:write"], oldRefused: true },
      { script: ["new:read", "old:read", "old:write", "new:write"], oldRefused: false },
      { script: ["new:read", "old:read", "new:write", "old:write"], oldRefused: true },
      { script: ["new:read", "new:write", "old:read", "old:write"], oldRefused: true },
    ];
    for (const seeded of [false, true]) {
      for (const { script, oldRefused } of interleavings) {
        it(`epochs ${OLD} and ${NEW} racing (${seeded ? "over an existing resource" : "to create it"}): ${script.join(", ")} ends with the new term's data`, async () => {
          const resource = await target.fresh();
          if (seeded) await resource.write("before", OLD - 1);
          const turn = scheduler(script);
          const [oldResult, newResult] = await Promise.allSettled([
            resource.write("old", OLD, { around: turn("old") }),
            resource.write("new", NEW, { around: turn("new") }),
          ]);
          expect(newResult.status).toBe("fulfilled");
          if (oldRefused) {
            expect(oldResult).toMatchObject({ status: "rejected", reason: { name: "FencedOutError", epoch: OLD, storedEpoch: NEW } });
          } else {
            expect(oldResult.status).toBe("fulfilled");
            // It landed before the new write, which then wrote over it.
            expect(newResult).toMatchObject({ value: { previousEpoch: OLD } });
          }
          expect(await resource.read()).toEqual({ value: "new", epoch: NEW });
        });
      }
    }

    it("epochs 4 and 5 racing freely in 20 random interleavings: the new term's data stays, the old write lands only before it", async () => {
      for (let round = 0; round < 20; round += 1) {
        const resource = await target.fresh();
        if (round % 2 === 1) await resource.write("before", OLD - 1);
        const draw = random(round + 1);
        const [oldResult, newResult] = await Promise.allSettled([
          resource.write(`old ${round}`, OLD, { around: jitter(draw) }),
          resource.write(`new ${round}`, NEW, { around: jitter(draw) }),
        ]);
        expect(newResult.status, `round ${round}`).toBe("fulfilled");
        if (oldResult.status === "rejected") {
          expect(oldResult.reason, `round ${round}`).toMatchObject({ name: "FencedOutError", storedEpoch: NEW });
        } else {
          expect(newResult, `round ${round}`).toMatchObject({ value: { previousEpoch: OLD } });
        }
        expect(await resource.read(), `round ${round}`).toEqual({ value: `new ${round}`, epoch: NEW });
      }
    });

    it("writers at the same epoch racing all write (a lost ETag race is retried), the last one's data stays", async () => {
      const resource = await target.fresh();
      const results = await Promise.all(["a", "b", "c"].map((value) => resource.write(value, NEW)));
      expect(results.filter((result) => result.created)).toHaveLength(1);
      const stored = await resource.read();
      expect(stored?.epoch).toBe(NEW);
      expect(["a", "b", "c"]).toContain(stored?.value);
    });

    it("a write that loses every ETag race gives up after maxAttempts with FencedWriteContendedError, writing nothing", async () => {
      const resource = await target.fresh();
      await resource.write("start", NEW);
      let competing = 0;
      // Another writer of the same term gets in between each read and write.
      const contended: Around = async (step, call) => {
        if (step === "write") {
          competing += 1;
          await resource.write(`competing ${competing}`, NEW);
        }
        return call();
      };
      const lost = await resource.write("never", NEW, { around: contended, maxAttempts: 3 }).catch((error: unknown) => error);
      expect(lost).toBeInstanceOf(FencedWriteContendedError);
      expect(lost).toMatchObject({ epoch: NEW, attempts: 3 });
      expect(await resource.read()).toEqual({ value: "competing 3", epoch: NEW });
    });

    it("a resource written before fencing (no mark) takes any epoch, and is marked from then on", async () => {
      const resource = await target.fresh();
      await resource.writeUnfenced("legacy", undefined);
      expect(await resource.write("fenced", OLD)).toMatchObject({ created: false, previousEpoch: undefined });
      expect(await resource.read()).toEqual({ value: "fenced", epoch: OLD });
      await expect(resource.write("stale", OLD - 1)).rejects.toBeInstanceOf(FencedOutError);
    });

    it("a mark that is not a non-negative integer is refused, not overwritten", async () => {
      const resource = await target.fresh();
      await resource.writeUnfenced("odd", "seven");
      await expect(resource.write("fenced", NEW)).rejects.toThrow(/epoch mark `haEpoch` of .* is "seven", not a non-negative integer/i);
      expect(await resource.read()).toEqual({ value: "odd", epoch: "seven" });
    });
  });
}
