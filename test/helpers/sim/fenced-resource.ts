import type { FenceableTableClient, FenceableTableEntity } from "../../../shared/sdk/fencing/fenced-table-entity.js";
import type { SimProcess } from "./process.js";
import type { Prng } from "./prng.js";
import type { SimWorld } from "./world.js";

/** A write the resource applied: whose, with which epoch mark, when. */
export interface AppliedWrite {
  readonly at: number;
  readonly who: string;
  readonly epoch: number;
}

/**
 * The downstream store the primaries' work writes to: one Table entity, with the SDK's own
 * fencedTableEntity doing the read-check-write against it (docs/fencing.md), as a worker's
 * TableClient would. Each call travels 0..maxLatencyMs each way as its own event, and its
 * answer is delivered into the caller's process (not while it is frozen), so a check and
 * its conditional write can be interleaved with another writer's. It records every write it
 * applies, which the `fenced-writes` invariant judges: no lower epoch after a higher one.
 * It is reachable by everyone, also by a participant cut off from the service: the case
 * ride-through is for. With `ignoreEtag` (a planted bug) an update is applied whatever the
 * ETag, as a read-check-write without If-Match would.
 */
export class SimFencedTable {
  readonly applied: AppliedWrite[] = [];
  #entity: { readonly etag: string; readonly properties: Readonly<Record<string, unknown>> } | undefined;
  #etags = 0;

  constructor(
    private readonly world: SimWorld,
    private readonly rng: Prng,
    private readonly maxLatencyMs: number,
    private readonly ignoreEtag: boolean,
  ) {}

  /** The client a process writes through; `who` names it in the record. */
  clientFor(process: SimProcess, who: () => string): FenceableTableClient {
    return {
      tableName: "simfenced",
      getEntity: (partitionKey, rowKey) =>
        this.#call(process, () => {
          if (this.#entity === undefined) throw Object.assign(new Error("ResourceNotFound"), { statusCode: 404 });
          return { ...this.#entity.properties, partitionKey, rowKey, etag: this.#entity.etag };
        }),
      createEntity: (entity) =>
        this.#call(process, () => {
          if (this.#entity !== undefined) throw Object.assign(new Error("EntityAlreadyExists"), { statusCode: 409 });
          return { etag: this.#apply(entity, who()) };
        }),
      updateEntity: (entity, _mode, options) =>
        this.#call(process, () => {
          if (this.#entity === undefined) throw Object.assign(new Error("ResourceNotFound"), { statusCode: 404 });
          if (!this.ignoreEtag && options?.etag !== this.#entity.etag) throw Object.assign(new Error("UpdateConditionNotSatisfied"), { statusCode: 412 });
          return { etag: this.#apply(entity, who()) };
        }),
    };
  }

  #apply(entity: FenceableTableEntity, who: string): string {
    const mark = entity["haEpoch"] as { readonly value: string };
    const etag = `W/"${++this.#etags}"`;
    this.#entity = { etag, properties: { ...entity } };
    this.applied.push({ at: this.world.now, who, epoch: Number(mark.value) });
    return etag;
  }

  /** The call reaches the store after 0..maxLatencyMs, runs there at once, and its answer travels back as long. */
  #call<T>(process: SimProcess, perform: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const there = this.rng.int(0, this.maxLatencyMs);
      const back = this.rng.int(0, this.maxLatencyMs);
      this.world.schedule(this.world.now + there, () => {
        let settle: () => void;
        try {
          const value = perform();
          settle = () => resolve(value);
        } catch (error) {
          settle = () => reject(error);
        }
        this.world.schedule(this.world.now + back, () => process.post(settle));
      });
    });
  }
}
