import type { BulkStore } from './bulk-store.js';
import type { ClusterStore } from './cluster-store.js';
import type { ConsoleSessionStore } from './console-session-store.js';
import type { CopyableStore } from './copyable-store.js';
import type { DeliveryQueue } from './delivery-queue.js';
import type { EventArchive } from './event-archive.js';
import type { EventHeadersStore } from './event-headers-store.js';
import type { EventStore } from './event-store.js';
import type { JobStore } from './job-store.js';
import type { NewEventStore } from './new-event-store.js';
import type { OutageStore } from './outage-store.js';
import type { OutboxStore } from './outbox-store.js';
import type { QuarantineStore } from './quarantine-store.js';
import type { RetentionStore } from './retention-store.js';
import type { RuleSetStore } from './rule-set-store.js';
import type { SeenKeysStore } from './seen-keys-store.js';
import type { SchemaStore } from './schema-store.js';
import type { SettingStore } from './setting-store.js';
import type { StoreLifecycle } from './store-lifecycle.js';

/**
 * Everything stored, as one backend class implements it: SQLite (one process) and PostgreSQL (any number of
 * nodes), both checked by the contract suite in test/contract (a file per role). A module takes only the
 * role(s) it uses; only what opens, copies or composes a whole store takes `Store`. Times cross the roles
 * in the store's clock (src/store/clock.ts, unix ms); PostgreSQL keeps leases, heartbeats and due times on
 * the database's clock inside, so nodes agree on them.
 */
export interface Store
  extends EventStore,
    EventHeadersStore,
    NewEventStore,
    DeliveryQueue,
    OutboxStore,
    BulkStore,
    EventArchive,
    RuleSetStore,
    OutageStore,
    RetentionStore,
    JobStore,
    ClusterStore,
    SettingStore,
    ConsoleSessionStore,
    CopyableStore,
    QuarantineStore,
    StoreLifecycle,
    SeenKeysStore,
    SchemaStore {}
