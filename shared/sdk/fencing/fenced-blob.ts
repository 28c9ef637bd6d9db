/**
 * Fenced uploads of one blob with the caller's own `BlockBlobClient` from
 * @azure/storage-blob (docs/fencing.md). The epoch mark is a metadata entry of the blob, so
 * it is replaced together with the content, in one conditional upload. The SDK imports
 * nothing of that package: the client is described by the few methods used.
 */

import {
  conditionalWrite,
  fencedWriter,
  parseStoredEpoch,
  unlessMissing,
  type FenceableCallOptions,
  type FencedWriteOptions,
  type FencedWriteResult,
  type FencedWriterOptions,
} from "./fenced-write.js";

/** The blob's HTTP headers, as @azure/storage-blob's `BlobHTTPHeaders`. */
export interface FenceableBlobHeaders {
  /** Cache-Control. */
  blobCacheControl?: string;
  /** Content-Type. */
  blobContentType?: string;
  /** Content-MD5. */
  blobContentMD5?: Uint8Array;
  /** Content-Encoding. */
  blobContentEncoding?: string;
  /** Content-Language. */
  blobContentLanguage?: string;
  /** Content-Disposition. */
  blobContentDisposition?: string;
}

/** The methods of @azure/storage-blob's `BlockBlobClient` a fenced upload uses. */
export interface FenceableBlockBlobClient {
  /** The blob's URL; its query (a SAS) is left out of messages. */
  readonly url: string;
  /** Reads the blob's ETag and metadata, where its epoch mark is. */
  getProperties(options?: FenceableCallOptions): Promise<{ readonly etag?: string; readonly metadata?: Record<string, string> }>;
  /** Uploads the blob's whole content, If-Match the ETag read, or If-None-Match `*` when there was none. */
  upload(
    body: string | Uint8Array,
    contentLength: number,
    options?: FenceableCallOptions & {
      metadata?: Record<string, string>;
      blobHTTPHeaders?: FenceableBlobHeaders;
      conditions?: { ifMatch?: string; ifNoneMatch?: string };
    },
  ): Promise<{ readonly etag?: string }>;
}

/** What each fenced upload takes: the epoch, and the blob's metadata and headers. */
export interface FencedBlobUploadOptions extends FencedWriteOptions {
  /** The blob's metadata after the upload (the mark is added); none kept from before, as with any upload. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** The blob's HTTP headers after the upload. */
  readonly blobHTTPHeaders?: FenceableBlobHeaders;
}

/** Fenced uploads to one blob, as fencedBlob() makes them. */
export interface FencedBlob {
  /** Uploads `data` as the blob's whole content if no newer epoch has written it; throws FencedOutError if one has. */
  upload(data: string | Uint8Array, options: FencedBlobUploadOptions): Promise<FencedWriteResult>;
}

/** Fenced uploads to `blob` (e.g. `containerClient.getBlockBlobClient("state.json")`). */
export function fencedBlob(blob: FenceableBlockBlobClient, options?: FencedWriterOptions): FencedBlob {
  // Blob metadata names are case-insensitive and come back lower-cased.
  const writer = fencedWriter(options, "haepoch");
  const markKey = writer.epochField.toLowerCase();
  if (typeof blob?.getProperties !== "function" || typeof blob.upload !== "function") {
    throw new TypeError("Expected a BlockBlobClient from @azure/storage-blob (e.g. containerClient.getBlockBlobClient(name)).");
  }
  // Without the query: a client made from a SAS URL carries its signature there.
  const resource = `blob ${blob.url.split("?")[0]}`;
  return {
    upload: (data, uploadOptions) =>
      writer.write(uploadOptions, (epoch) => {
        if (typeof data !== "string" && !(data instanceof Uint8Array)) throw new TypeError("Expected the blob's data to be a string or a Uint8Array (a Buffer).");
        const metadata = Object.fromEntries(Object.entries(uploadOptions.metadata ?? {}).filter(([key]) => key.toLowerCase() !== markKey));
        metadata[markKey] = String(epoch);
        const contentLength = typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
        return {
          resource,
          read: async (abortSignal) => {
            const properties = await unlessMissing(() => blob.getProperties({ abortSignal }));
            if (properties === undefined) return undefined;
            const stored = Object.entries(properties.metadata ?? {}).find(([key]) => key.toLowerCase() === markKey)?.[1];
            if (properties.etag === undefined) throw new Error(`${resource} was read without an ETag, so it cannot be written conditionally.`);
            return { epoch: parseStoredEpoch(resource, markKey, stored), etag: properties.etag };
          },
          write: (etag, abortSignal) => {
            const conditions = etag === undefined ? { ifNoneMatch: "*" } : { ifMatch: etag };
            // 409 (BlobAlreadyExists) or 412: created or changed since the read.
            return conditionalWrite(() => blob.upload(data, contentLength, { metadata, blobHTTPHeaders: uploadOptions.blobHTTPHeaders, conditions, abortSignal }), [409, 412]);
          },
        };
      }),
  };
}
