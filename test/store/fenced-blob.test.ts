import { BlobServiceClient, type BlockBlobClient, type ContainerClient } from "@azure/storage-blob";
import { expect, it } from "vitest";
import { fencedBlob, type FenceableBlockBlobClient } from "../../shared/sdk/index.js";
import { startTestAzuriteBlob, type TestAzuriteBlob } from "../helpers/azurite-blob.js";
import { describeFencedWrites, direct, type Around } from "./fenced-write-conformance.js";

let azurite: TestAzuriteBlob;
let container: ContainerClient;
let blobs = 0;

/** The user's BlockBlobClient with its calls passed through `around`. */
function aroundBlob(blob: BlockBlobClient, around: Around): FenceableBlockBlobClient {
  return {
    url: blob.url,
    getProperties: (...args) => around("read", () => blob.getProperties(...args)),
    upload: (...args) => around("write", () => blob.upload(...args)),
  };
}

const markOf = (value: string | undefined): unknown => (value !== undefined && /^\d+$/.test(value) ? Number(value) : value);

describeFencedWrites("blob on Azurite", {
  setUp: async () => {
    azurite = await startTestAzuriteBlob();
    container = BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient("fenced");
    await container.create();
  },
  tearDown: () => azurite.close(),
  fresh: async () => {
    blobs += 1;
    const blob = container.getBlockBlobClient(`state-${blobs}.json`);
    return {
      resourcePattern: new RegExp(`^blob http://127\\.0\\.0\\.1:\\d+/devstoreaccount1/fenced/state-${blobs}\\.json$`),
      write: (value, epoch, { around = direct, maxAttempts } = {}) => fencedBlob(aroundBlob(blob, around), { maxAttempts }).upload(value, { epoch }),
      read: async () => {
        const properties = await blob.getProperties().catch((error: { statusCode?: number }) => {
          if (error.statusCode === 404) return undefined;
          throw error;
        });
        if (properties === undefined) return undefined;
        return { value: (await blob.downloadToBuffer()).toString("utf8"), epoch: markOf(properties.metadata?.haepoch) };
      },
      writeUnfenced: async (value, mark) => {
        await blob.upload(value, Buffer.byteLength(value), { metadata: mark === undefined ? {} : { haepoch: String(mark) } });
      },
    };
  },
});

it("takes the user's BlockBlobClient as it is, with bytes, the caller's metadata and headers", async () => {
  const local = await startTestAzuriteBlob();
  try {
    const blobs = BlobServiceClient.fromConnectionString(local.connectionString).getContainerClient("headers");
    await blobs.create();
    const blob = blobs.getBlockBlobClient("report.bin");
    const fenced = fencedBlob(blob);
    const bytes = new Uint8Array([0, 1, 2, 255]);
    // A caller's own `haEpoch` in the metadata does not replace the mark.
    await fenced.upload(bytes, { epoch: 7, metadata: { owner: "scheduler", HAEPOCH: "99" }, blobHTTPHeaders: { blobContentType: "application/octet-stream" } });
    const properties = await blob.getProperties();
    expect(properties.metadata).toEqual({ owner: "scheduler", haepoch: "7" });
    expect(properties.contentType).toBe("application/octet-stream");
    expect([...(await blob.downloadToBuffer())]).toEqual([0, 1, 2, 255]);
    // Multi-byte characters: the length uploaded is in bytes.
    await fenced.upload("épée ✓", { epoch: 7 });
    expect((await blob.downloadToBuffer()).toString("utf8")).toBe("épée ✓");
  } finally {
    await local.close();
  }
});

it("rejects with the client's own error when the container is missing", async () => {
  const local = await startTestAzuriteBlob();
  try {
    const blob = BlobServiceClient.fromConnectionString(local.connectionString).getContainerClient("nosuchcontainer").getBlockBlobClient("b");
    const missing = await fencedBlob(blob).upload("x", { epoch: 1 }).catch((error: unknown) => error);
    expect(missing).toMatchObject({ name: "RestError", statusCode: 404, code: "ContainerNotFound" });
  } finally {
    await local.close();
  }
});
