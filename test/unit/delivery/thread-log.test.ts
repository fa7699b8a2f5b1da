import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createThreadLogger, writeThreadLogEntry, type ThreadLogEntry } from '../../../src/delivery/thread/thread-log.js';
import { createLogger } from '../../../src/log.js';

/** A receiver's logger writing JSON lines into `lines`. */
function receiverLogger(lines: Record<string, unknown>[]) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return createLogger('info', sink);
}

/** Passes each entry through a structured clone, as a message between threads does. */
function relay(lines: Record<string, unknown>[], level = 'info') {
  const receiver = receiverLogger(lines);
  return createThreadLogger(level, (entry: ThreadLogEntry) => writeThreadLogEntry(receiver, structuredClone(entry)));
}

describe('the delivery thread\'s log, written by the receiver', () => {
  it('writes fields, message and level, marked as the thread\'s, with credentials redacted', () => {
    const lines: Record<string, unknown>[] = [];
    relay(lines).warn({ ruleId: 'fwd', status: 400, headers: { authorization: 'Bearer x' } }, 'delivery attempt');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, thread: 'delivery', ruleId: 'fwd', status: 400, msg: 'delivery attempt', service: 'hookrelay', headers: { authorization: '[redacted]' } });
  });

  it('keeps an error\'s own properties and formats message arguments', () => {
    const lines: Record<string, unknown>[] = [];
    const err = Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' });
    const logger = relay(lines);
    logger.error({ err }, 'claim failed on %s', 'node-1');
    logger.error(err);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'claim failed on node-1', err: { message: 'connect refused', code: 'ECONNREFUSED' } });
    expect(lines[1]).toMatchObject({ level: 50, msg: 'connect refused', err: { message: 'connect refused', code: 'ECONNREFUSED' } });
  });

  it('sends nothing below the thread\'s level, and a value that cannot cross threads as its JSON form', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = relay(lines, 'warn');
    logger.info('not sent');
    logger.warn({ callback: () => undefined, n: 1 }, 'odd fields');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'odd fields', n: 1 });
    expect(lines[0]).not.toHaveProperty('callback');
  });
});
