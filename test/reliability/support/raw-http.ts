import net from 'node:net';

/** What came back on a raw connection: the first response, parsed, or nothing before the server hung up. */
export interface RawResponse {
  /** 0 when the connection ended without a complete response head. */
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The server closed (or reset) the connection. */
  closed: boolean;
  /** A socket error (ECONNRESET, ...) or 'timeout' when the client gave up. */
  error?: string;
  durationMs: number;
}

function parseHead(head: string): { status: number; headers: Record<string, string> } {
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) {
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
  }
  return { status, headers };
}

function dechunk(data: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) return null;
    const size = parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) return Buffer.concat(parts);
    const start = lineEnd + 2;
    if (data.length < start + size + 2) return null;
    parts.push(data.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/** The first complete response in `data`, or null while it is still incomplete. */
function completeResponse(data: Buffer): { status: number; headers: Record<string, string>; body: Buffer } | null {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const { status, headers } = parseHead(data.subarray(0, headEnd).toString('latin1'));
  const rest = data.subarray(headEnd + 4);
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    return rest.length >= length ? { status, headers, body: rest.subarray(0, length) } : null;
  }
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const body = dechunk(rest);
    return body ? { status, headers, body } : null;
  }
  return null; // delimited by close
}

export interface RawRequestOptions {
  host?: string;
  /** The client gives up after this long (reported as error 'timeout'). */
  timeoutMs?: number;
  /** Written one after another, with `gapMs` between them (slow clients). */
  gapMs?: number;
  /** Resolve as soon as one complete response arrived, without waiting for the close. */
  firstResponseOnly?: boolean;
  /** Write each part when the socket has drained the previous ones, as a streaming uploader does. */
  streamed?: boolean;
  /** With `streamed`: the first part (the head) goes at once, the others from this long after. */
  bodyAfterMs?: number;
}

/**
 * Sends bytes exactly as given (header names, case, duplicates, framing are the caller's) and reads the
 * answer. The request should carry `Connection: close` unless `firstResponseOnly` is set.
 */
export function rawRequest(port: number, parts: (string | Buffer)[] | string | Buffer, options: RawRequestOptions = {}): Promise<RawResponse> {
  const chunks = (Array.isArray(parts) ? parts : [parts]).map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : p));
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: options.host ?? '127.0.0.1' });
    const received: Buffer[] = [];
    let error: string | undefined;
    let settled = false;
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const t of writeTimers) clearTimeout(t);
      const data = Buffer.concat(received);
      const parsed = completeResponse(data);
      let result: RawResponse;
      if (parsed) result = { ...parsed, closed, durationMs: performance.now() - started };
      else {
        const headEnd = data.indexOf('\r\n\r\n');
        const head = headEnd >= 0 ? parseHead(data.subarray(0, headEnd).toString('latin1')) : { status: 0, headers: {} };
        result = { ...head, body: headEnd >= 0 ? data.subarray(headEnd + 4) : Buffer.alloc(0), closed, durationMs: performance.now() - started };
      }
      if (error) result.error = error;
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => {
      error ??= 'timeout';
      finish(false);
    }, options.timeoutMs ?? 10_000);
    const writeTimers: NodeJS.Timeout[] = [];
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (options.firstResponseOnly && completeResponse(Buffer.concat(received))) finish(false);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
    });
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      if (options.streamed) {
        let next = 0;
        const writeMore = (): void => {
          while (next < chunks.length && !socket.destroyed) {
            if (!socket.write(chunks[next++]!)) {
              socket.once('drain', () => setImmediate(writeMore));
              return;
            }
          }
        };
        if (chunks.length > 0) socket.write(chunks[next++]!);
        writeTimers.push(setTimeout(writeMore, options.bodyAfterMs ?? 0));
        return;
      }
      if (!options.gapMs) {
        for (const chunk of chunks) if (!socket.destroyed) socket.write(chunk);
        return;
      }
      chunks.forEach((chunk, i) => {
        writeTimers.push(setTimeout(() => {
          if (!socket.destroyed && socket.writable) socket.write(chunk);
        }, i * options.gapMs!));
      });
    });
  });
}

/** A request head: request line, headers exactly as listed (name case and duplicates kept), blank line. */
export function requestHead(method: string, path: string, headers: [string, string | number][]): string {
  return `${method} ${path} HTTP/1.1\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
}

/** Encodes `body` as chunked transfer coding, cut into the given chunk sizes (the last size repeats). */
export function chunked(body: Buffer, sizes: number[]): Buffer {
  const out: Buffer[] = [];
  let offset = 0;
  let i = 0;
  while (offset < body.length) {
    const size = Math.max(1, sizes[Math.min(i, sizes.length - 1)]!);
    const piece = body.subarray(offset, offset + size);
    out.push(Buffer.from(`${piece.length.toString(16)}\r\n`, 'latin1'), piece, Buffer.from('\r\n'));
    offset += piece.length;
    i += 1;
  }
  out.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(out);
}
