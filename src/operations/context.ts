import type { Logger } from 'pino';
import type { QuarantineStore } from '../store/quarantine-store.js';
import type { ContractSet } from '../contracts/contract-set.js';
import type { Dispatcher } from 'undici';
import type { SourceConfig } from '../config.js';
import type { SsrfGuard } from '../delivery/ssrf-guard.js';
import type { Env } from '../rules/env-references.js';
import type { RuleSetStatus } from '../rules/watcher.js';
import type { RuleSet } from '../rules/types.js';
import type { ReadinessReport } from '../http/readiness.js';
import type { ClusterStore, NewNode } from '../store/cluster-store.js';
import type { DestinationsView } from './view-schemas.js';
import type { EventStore } from '../store/event-store.js';
import type { NewEventStore } from '../store/new-event-store.js';
import type { OutboxStore } from '../store/outbox-store.js';
import type { BulkStore } from '../store/bulk-store.js';
import type { EventArchive } from '../store/event-archive.js';
import type { RuleSetStore } from '../store/rule-set-store.js';
import type { OutageStore } from '../store/outage-store.js';
import type { JobStore } from '../store/job-store.js';
import type { SchemaStore } from '../store/schema-store.js';
import type { SettingStore } from '../store/setting-store.js';
import type { RuntimeInfo } from '../runtime/runtime-file.js';

/** The store roles the operations act through (none of the delivery loop's, retention's or the copy's). */
export type OperationsStore = EventStore & NewEventStore & OutboxStore & BulkStore & EventArchive & RuleSetStore & OutageStore & JobStore & ClusterStore & QuarantineStore & SchemaStore & SettingStore;

/** What the operations work with: assembled once by the composition root (server) or per command (local CLI). */
export interface OperationsContext {
  store: OperationsStore;
  rules: { current(): RuleSet; status(): RuleSetStatus };
  /** The SSRF-guarded dispatcher (made on first use): resends reach only addresses the guard allows. */
  dispatcher: () => Promise<Dispatcher>;
  /** The same SSRF guard: explain asks it about destinations without connecting. */
  guard: SsrfGuard;
  sources: ReadonlyMap<string, SourceConfig>;
  logger: Logger;
  now: () => number;
  /** Levels of nesting an edited body may have (`maxDepth`); default DEFAULT_MAX_DEPTH. */
  maxDepth?: number;
  /** The pinned contracts in force (a release checks the body against them); absent: none. */
  contracts?: () => ContractSet;
  /** Values for `${NAME}` references: kept rule versions (replay with original routing) are compiled with them. */
  env: Env;
  /** The node answering (the server); absent in the CLI's local mode, which is no node. */
  node?: NewNode;
  /** This node's readiness and its checks (the server); absent in the CLI's local mode. */
  readiness?: () => Promise<ReadinessReport>;
  /** What `serve` recorded for this process in its runtime file (how commands find it); undefined when none is this process's. */
  runtime?: () => RuntimeInfo | undefined;
  /** The delivery loop's view of its destinations; absent when delivery is off. */
  destinations?: () => DestinationsView | Promise<DestinationsView>;
}
