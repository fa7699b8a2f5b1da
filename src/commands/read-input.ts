import { readFile } from 'node:fs/promises';

/** Reads a file's exact bytes, or standard input for "-". */
export async function readInput(file: string): Promise<Buffer> {
  if (file !== '-') return readFile(file);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
