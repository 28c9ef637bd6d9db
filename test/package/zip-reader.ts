/**
 * Just enough of the zip format to check a package: the central directory's entries and
 * each entry's data. No zip64, no encryption (the packager writes neither).
 */
import { inflateRawSync } from "node:zlib";

export interface ZipEntry {
  readonly name: string;
  readonly method: number;
  /** The raw MS-DOS time and date fields. */
  readonly dosTime: number;
  readonly dosDate: number;
  /** Unix mode from the upper half of the external attributes. */
  readonly unixMode: number;
  readonly extraFieldLength: number;
  readonly compressedSize: number;
  readonly localHeaderOffset: number;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;

export function readEntries(zip: Buffer): ZipEntry[] {
  // The end record sits in the last 22 bytes plus a comment of at most 65535.
  let end = -1;
  for (let offset = zip.length - 22; offset >= Math.max(0, zip.length - 22 - 0xffff); offset--) {
    if (zip.readUInt32LE(offset) === END_OF_CENTRAL_DIRECTORY) {
      end = offset;
      break;
    }
  }
  if (end < 0) throw new Error("not a zip file: no end of central directory record");
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let index = 0; index < count; index++) {
    if (zip.readUInt32LE(offset) !== CENTRAL_DIRECTORY_HEADER) throw new Error(`bad central directory header at ${offset}`);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    entries.push({
      name: zip.toString("utf8", offset + 46, offset + 46 + nameLength),
      method: zip.readUInt16LE(offset + 10),
      dosTime: zip.readUInt16LE(offset + 12),
      dosDate: zip.readUInt16LE(offset + 14),
      unixMode: zip.readUInt32LE(offset + 38) >>> 16,
      extraFieldLength: extraLength,
      compressedSize: zip.readUInt32LE(offset + 20),
      localHeaderOffset: zip.readUInt32LE(offset + 42),
    });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

export function readEntryData(zip: Buffer, entry: ZipEntry): Buffer {
  const header = entry.localHeaderOffset;
  if (zip.readUInt32LE(header) !== LOCAL_FILE_HEADER) throw new Error(`bad local header for ${entry.name}`);
  const start = header + 30 + zip.readUInt16LE(header + 26) + zip.readUInt16LE(header + 28);
  const data = zip.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return Buffer.from(data);
  if (entry.method === 8) return inflateRawSync(data);
  throw new Error(`${entry.name}: unsupported compression method ${entry.method}`);
}

/** MS-DOS date and time fields to "YYYY-MM-DD hh:mm:ss". */
export function dosTimestamp(entry: ZipEntry): string {
  const pad = (value: number): string => String(value).padStart(2, "0");
  const year = 1980 + (entry.dosDate >> 9);
  const month = (entry.dosDate >> 5) & 0xf;
  const day = entry.dosDate & 0x1f;
  const hours = entry.dosTime >> 11;
  const minutes = (entry.dosTime >> 5) & 0x3f;
  const seconds = (entry.dosTime & 0x1f) * 2;
  return `${year}-${pad(month)}-${pad(day)} ${pad(hours)}:${pad(minutes)}:${pad(seconds)}`;
}
