export class LineTooLongError extends Error {}

/**
 * The lines of a byte stream (without their "\n" or "\r\n"), each decoded as UTF-8, read as the bytes come:
 * a line longer than `maxBytes` ends the read with LineTooLongError once that many bytes of it are in, so
 * a huge line costs at most `maxBytes` of memory, never a string beyond what the runtime can hold.
 */
export async function* boundedLines(input: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<string> {
  let parts: Buffer[] = [];
  let size = 0;
  const line = (): string => {
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    return bytes.toString('utf8', 0, end);
  };
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (;;) {
      const newline = bytes.indexOf(0x0a, start);
      const end = newline === -1 ? bytes.length : newline;
      size += end - start;
      if (size > maxBytes) throw new LineTooLongError(`the line is longer than ${maxBytes} bytes (the longest an event of maxBody can take)`);
      // A copy: a slice would keep the whole chunk alive while the line grows.
      if (end > start) parts.push(Buffer.from(bytes.subarray(start, end)));
      if (newline === -1) break;
      yield line();
      start = newline + 1;
    }
  }
  if (size > 0) yield line();
}
