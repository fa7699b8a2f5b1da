import type { Dispatcher } from 'undici';
import type { SsrfGuard } from './ssrf-guard.js';

/** The guarded dispatcher, made on first use. */
export interface LazyDispatcher {
  /** The dispatcher; the first call loads undici and makes it. */
  get(): Promise<Dispatcher>;
  /** Closes it, if it was made. */
  close(): Promise<void>;
}

/**
 * The receiver's event loop sends only alerts and admin resends (its deliveries run in their own thread),
 * and many receivers never send either: undici is loaded for the first of them, not at start.
 */
export function lazyGuardedDispatcher(guard: SsrfGuard): LazyDispatcher {
  let made: Promise<Dispatcher> | null = null;
  return {
    get: () => (made ??= import('./guarded-dispatcher.js').then(({ createGuardedDispatcher }) => createGuardedDispatcher({ guard }))),
    close: async () => {
      if (made) await (await made).close();
    },
  };
}
