import { closeSync, fdatasync, openSync } from 'node:fs';

export type FsyncFn = (fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => void;

/**
 * Makes WAL commits durable without blocking the event loop. SQLite runs with synchronous=NORMAL (the WAL
 * is written on commit but fsynced only at checkpoints); after each group commit the store awaits `sync()`,
 * which fsyncs the WAL file on libuv's thread pool. One fsync covers every commit written before it
 * started, so commits made while one is in flight share the next: that is what lets `durability: full`
 * keep up with load. Equivalent to synchronous=FULL for what is acknowledged: nothing is acknowledged
 * before its WAL frames are on stable storage.
 *
 * fdatasync, as SQLite itself syncs on Linux: it flushes the data and the file size, not timestamps, so a
 * WAL rewritten in place needs no file-system journal commit, which makes each sync shorter than fsync's.
 */
export class WalFsync {
  private readonly fd: number;
  private requested = 0;
  private syncing = false;
  private waiters: { ticket: number; resolve: () => void; reject: (err: Error) => void }[] = [];

  constructor(walPath: string, private readonly fsyncFn: FsyncFn = fdatasync) {
    // Any descriptor of the file flushes its data; SQLite keeps the WAL file while a connection is open.
    this.fd = openSync(walPath, 'r');
  }

  /** Resolves once everything written to the WAL before this call is on stable storage. */
  sync(): Promise<void> {
    const ticket = ++this.requested;
    return new Promise((resolve, reject) => {
      this.waiters.push({ ticket, resolve, reject });
      this.startNext();
    });
  }

  private startNext(): void {
    if (this.syncing || this.waiters.length === 0) return;
    this.syncing = true;
    const coveredUpTo = this.requested;
    this.fsyncFn(this.fd, (err) => {
      this.syncing = false;
      const covered = this.waiters.filter((w) => w.ticket <= coveredUpTo);
      this.waiters = this.waiters.filter((w) => w.ticket > coveredUpTo);
      for (const waiter of covered) {
        if (err) waiter.reject(err);
        else waiter.resolve();
      }
      this.startNext();
    });
  }

  close(): void {
    closeSync(this.fd);
  }
}
