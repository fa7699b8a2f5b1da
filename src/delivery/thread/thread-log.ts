import { pino, type Logger } from 'pino';

/** One log call of the delivery thread, as its arguments: the receiver's logger writes it. */
export interface ThreadLogEntry {
  level: number;
  /** The call's fields (`err` already in its logged shape), or none. */
  fields: Record<string, unknown>;
  /** The message and its format arguments. */
  args: unknown[];
}

/**
 * The delivery thread's logger: each call at an enabled level is handed to `post` as its arguments, not
 * written. The receiver writes it through its own logger (its format, destination and redaction), so the
 * line is serialised once, there. Errors take their logged shape here, since a message between threads
 * would drop their own properties (`code`, `cause`).
 */
export function createThreadLogger(level: string, post: (entry: ThreadLogEntry) => void): Logger {
  return pino({
    level,
    hooks: {
      logMethod(inputArgs: unknown[], _method: unknown, levelValue: number) {
        const [first, ...rest] = inputArgs;
        let entry: ThreadLogEntry;
        if (first instanceof Error) entry = { level: levelValue, fields: { err: pino.stdSerializers.err(first) }, args: rest.length > 0 ? rest : [first.message] };
        else if (typeof first === 'object' && first !== null) entry = { level: levelValue, fields: loggedFields(first as Record<string, unknown>), args: rest };
        else entry = { level: levelValue, fields: {}, args: inputArgs };
        try {
          post(entry);
        } catch {
          // Something that cannot cross to the receiver (a function, a socket): its JSON form can.
          post(JSON.parse(JSON.stringify(entry)) as ThreadLogEntry);
        }
      },
    },
  });
}

function loggedFields(fields: Record<string, unknown>): Record<string, unknown> {
  return fields.err instanceof Error ? { ...fields, err: pino.stdSerializers.err(fields.err) } : fields;
}

/** Writes one entry of the thread's log through the receiver's logger, at its level, marked as the thread's. */
export function writeThreadLogEntry(logger: Logger, entry: ThreadLogEntry): void {
  const level = logger.levels.labels[entry.level] as 'info' | undefined;
  if (level === undefined || typeof logger[level] !== 'function') return;
  const [message, ...formatArgs] = entry.args;
  logger[level]({ thread: 'delivery', ...entry.fields }, typeof message === 'string' ? message : '', ...formatArgs);
}
