import { createReadStream, createWriteStream, renameSync, rmSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { basename, dirname, join } from 'node:path';
import type { ImportedEvent, ImportResult } from '../store/event-archive.js';
import type { EventExport } from './admin-target.js';
import { ImportLineError, maxImportLineBytes, parseRecordLine, type ImportPolicy } from '../operations/import-record.js';
import { boundedLines, LineTooLongError } from './bounded-lines.js';
import type { Progress } from './progress-bar.js';

export interface ExportOutcome {
  exported: number;
  interrupted: boolean;
}

/** Writes one line, waiting when the stream's buffer is full (a slow pipe must not grow memory without bound). */
async function writeLine(stream: NodeJS.WritableStream, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, 'drain');
}

/**
 * Writes the export as NDJSON. To a file: into a temporary file beside it, renamed into place only when
 * complete, so an interrupted export leaves no partial file. To stdout: lines as they come; an interrupted
 * export's partial output must be discarded (the exit status says so).
 */
export async function writeExport(source: EventExport, target: { file?: string }, progress: Progress, signal: AbortSignal): Promise<ExportOutcome> {
  const temp = target.file ? join(dirname(target.file), `.${basename(target.file)}.partial-${process.pid}`) : null;
  const stream: NodeJS.WritableStream = temp ? createWriteStream(temp, { mode: 0o600 }) : process.stdout;
  let exported = 0;
  let interrupted = false;
  // A closed pipe (`| head`) or a full disk: stop writing and report it, never an unhandled 'error'.
  let writeError: Error | null = null;
  stream.on('error', (err: Error) => (writeError = err));
  progress.start(source.total);
  try {
    for await (const record of source.records) {
      if (writeError) throw writeError;
      if (signal.aborted) {
        interrupted = true;
        break;
      }
      await writeLine(stream, `${JSON.stringify(record)}\n`);
      exported += 1;
      progress.update(exported, Math.max(source.total, exported));
    }
  } catch (err) {
    if (temp) await closeAndRemove(stream as WriteStream, temp);
    throw err;
  } finally {
    progress.stop();
  }
  if (temp) {
    if (interrupted) {
      await closeAndRemove(stream as WriteStream, temp);
    } else {
      (stream as WriteStream).end();
      await once(stream, 'close');
      renameSync(temp, target.file!);
    }
  }
  return { exported, interrupted };
}

async function closeAndRemove(stream: WriteStream, path: string): Promise<void> {
  stream.end();
  await once(stream, 'close').catch(() => undefined);
  rmSync(path, { force: true });
}

/** Newlines in the file: the number of records, for the progress bar. */
async function countLines(file: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(file)) {
    for (const byte of chunk as Buffer) if (byte === 0x0a) lines += 1;
  }
  return lines;
}

export interface ImportOutcome extends ImportResult {
  lines: number;
  interrupted: boolean;
  /** Events (imported or already present) per source this instance has no configuration for. */
  unconfiguredSources: Record<string, number>;
}

export class ImportFileError extends Error {
  constructor(message: string, readonly outcome: ImportOutcome) {
    super(message);
  }
}

const IMPORT_BATCH = 500;

/**
 * Reads NDJSON written by `events export` and stores the events in batches, one transaction each. Events
 * already present (same source, event name and result id, the ingest key) are counted as duplicates and
 * left untouched, those whose key the ledger of seen keys holds after retention removed them as seen before, so running an interrupted import again carries on where it stopped. Each line is checked
 * as untrusted input (import-record.ts); the first bad one stops the import, after committing the good
 * lines before it, with its line number.
 */
export async function readImport(
  file: string,
  store: (events: ImportedEvent[]) => Promise<ImportResult>,
  policy: ImportPolicy,
  progress: Progress,
  signal: AbortSignal,
): Promise<ImportOutcome> {
  // No prototype: a source may be named anything, "__proto__" included.
  const unconfiguredSources = Object.create(null) as Record<string, number>;
  const outcome: ImportOutcome = { imported: 0, duplicates: 0, seenBefore: 0, lines: 0, interrupted: false, unconfiguredSources };
  const input = file === '-' ? process.stdin : createReadStream(file);
  progress.start(file === '-' ? 0 : await countLines(file));
  let batch: ImportedEvent[] = [];
  const commit = async (): Promise<void> => {
    if (batch.length === 0) return;
    const result = await store(batch);
    outcome.imported += result.imported;
    outcome.duplicates += result.duplicates;
    outcome.seenBefore += result.seenBefore;
    for (const event of batch) {
      if (!policy.sources.has(event.source)) outcome.unconfiguredSources[event.source] = (outcome.unconfiguredSources[event.source] ?? 0) + 1;
    }
    batch = [];
    progress.update(outcome.lines);
  };
  const maxLine = maxImportLineBytes(policy);
  const stopAt = async (message: string): Promise<never> => {
    outcome.lines -= 1;
    await commit(); // the lines before the bad one are good: keep them
    throw new ImportFileError(`${file}: line ${outcome.lines + 1}: ${message}`, outcome);
  };
  try {
    const lines = boundedLines(input as AsyncIterable<Buffer>, maxLine);
    for (;;) {
      outcome.lines += 1;
      let next: IteratorResult<string>;
      try {
        next = await lines.next();
      } catch (err) {
        if (!(err instanceof LineTooLongError)) throw err;
        return await stopAt(err.message);
      }
      if (next.done) {
        outcome.lines -= 1;
        break;
      }
      const line = next.value;
      if (line.trim() === '') continue;
      try {
        batch.push(parseRecordLine(line, policy));
      } catch (err) {
        if (!(err instanceof ImportLineError)) throw err;
        return await stopAt(err.message);
      }
      if (batch.length >= IMPORT_BATCH) {
        await commit();
        if (signal.aborted) {
          outcome.interrupted = true;
          break;
        }
      }
    }
    if (!outcome.interrupted) await commit();
  } finally {
    if (input !== process.stdin) (input as ReturnType<typeof createReadStream>).destroy();
    progress.stop();
  }
  return outcome;
}
