import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { SourceConfig } from '../../config.js';
import type { SsrfGuard } from '../../delivery/ssrf-guard.js';
import type { DestinationsView } from './response-schemas.js';
import type { RuleSetStatus } from '../../rules/watcher.js';
import type { RuleSet } from '../../rules/types.js';
import type { Store } from '../../store/store.js';

/** What the admin API works with; assembled once by the composition root. */
export interface AdminContext {
  store: Store;
  rules: { current(): RuleSet; status(): RuleSetStatus };
  /** Tells the delivery worker new deliveries are due (a no-op when delivery is disabled). */
  wakeWorker: () => void;
  /** The SSRF-guarded dispatcher: resends reach only addresses the guard allows. */
  dispatcher: Dispatcher;
  /** The same SSRF guard: explain asks it about destinations without connecting. */
  guard: SsrfGuard;
  sources: ReadonlyMap<string, SourceConfig>;
  logger: Logger;
  now: () => number;
  /** The delivery worker's view of its destinations; absent when delivery is off. */
  destinations?: () => DestinationsView;
}
