import { constants, type Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';

export type RegularFileRead = { text: string } | { error: string };

/**
 * O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer (which would hold a
 * thread-pool thread, and the process's exit, forever); it changes nothing for a regular file.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/**
 * Reads `path` as UTF-8 when it is a regular file (a symlink to one counts) of at most `maxBytes`;
 * anything else is described, never read: a FIFO, socket or device could block or never end.
 */
export async function readRegularFile(path: string, maxBytes: number): Promise<RegularFileRead> {
  try {
    const before = await stat(path);
    if (!before.isFile()) return { error: notRegular(before) };
    if (before.size > maxBytes) return { error: tooLarge(maxBytes, before.size) };
    const handle = await open(path, OPEN_FLAGS);
    try {
      // Checked again on the open file: the name may have been replaced since the stat.
      const opened = await handle.stat();
      if (!opened.isFile()) return { error: notRegular(opened) };
      // Read to the end rather than to the stated size: some files (procfs, FUSE) report 0 bytes.
      const chunks: Buffer[] = [];
      let length = 0;
      while (length <= maxBytes) {
        const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1 - length));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, length);
        if (bytesRead === 0) break;
        chunks.push(chunk.subarray(0, bytesRead));
        length += bytesRead;
      }
      // A file that grew past the limit since the stat is refused too.
      if (length > maxBytes) return { error: tooLarge(maxBytes) };
      return { text: Buffer.concat(chunks, length).toString('utf8') };
    } finally {
      await handle.close();
    }
  } catch (err) {
    return { error: `cannot read the file: ${(err as Error).message}` };
  }
}

function notRegular(stats: Stats): string {
  return `skipped: it is ${kindOf(stats)}, not a regular file (only regular files, or symlinks to them, are read as rules)`;
}

function tooLarge(maxBytes: number, size?: number): string {
  const what = size === undefined ? 'it grew past' : `its ${size} bytes are over`;
  return `skipped: ${what} the ${maxBytes}-byte limit for a rule file (HOOKRELAY_RULES_MAX_FILE_BYTES)`;
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'of an unknown kind';
}
