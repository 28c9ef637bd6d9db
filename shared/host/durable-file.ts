import { open, rename } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Replaces the file at `path` with `data` so that, once the promise resolves, the new
 * content survives a crash of this process *and* a crash of the machine (power loss,
 * kernel panic), as far as the disk honours a flush; before it resolves, the file holds
 * either the old content or the new one, never a mix.
 *
 * How: write `<path>~` and fsync it (its data is on disk), rename it over `path` (atomic
 * on POSIX file systems), then fsync the directory (the rename itself is on disk).
 * Without the fsyncs a rename survives a process crash but not a power loss: the kernel
 * may write the rename before the data.
 */
export async function replaceFileDurably(path: string, data: string): Promise<void> {
  const temporary = `${path}~`;
  const file = await open(temporary, "w");
  try {
    await file.writeFile(data);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  await syncDirectory(dirname(path));
}

async function syncDirectory(path: string): Promise<void> {
  // Node cannot fsync a directory on Windows; there the rename is as durable as NTFS makes it.
  if (process.platform === "win32") return;
  const directory = await open(path, "r");
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
