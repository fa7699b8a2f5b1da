import { clusterStoreContract } from './cluster-store-contract.js';
import { consoleSessionStoreContract } from './console-session-store-contract.js';
import type { StoreFactory } from './contract-helpers.js';
import { deliveryQueueContract } from './delivery-queue-contract.js';
import { eventArchiveContract } from './event-archive-contract.js';
import { eventStoreContract } from './event-store-contract.js';
import { jobStoreContract } from './job-store-contract.js';
import { newEventStoreContract } from './new-event-store-contract.js';
import { outageStoreContract } from './outage-store-contract.js';
import { outboxStoreContract } from './outbox-store-contract.js';
import { quarantineStoreContract } from './quarantine-store-contract.js';
import { retentionStoreContract } from './retention-store-contract.js';
import { ruleSetStoreContract } from './rule-set-store-contract.js';
import { seenKeysContract } from './seen-keys-contract.js';
import { settingStoreContract } from './setting-store-contract.js';
import { storePolicyContract } from './policy-contract.js';
import { storeCopyContract } from './store-copy-contract.js';
import { storeLifecycleContract } from './store-lifecycle-contract.js';

/** The contract of each store role; every backend runs them all (sqlite.test.ts, postgres.test.ts). */
export const ROLE_CONTRACTS: readonly ((factory: StoreFactory) => void)[] = [
  eventStoreContract,
  newEventStoreContract,
  deliveryQueueContract,
  outboxStoreContract,
  eventArchiveContract,
  ruleSetStoreContract,
  outageStoreContract,
  retentionStoreContract,
  jobStoreContract,
  clusterStoreContract,
  settingStoreContract,
  consoleSessionStoreContract,
  storeCopyContract,
  quarantineStoreContract,
  storeLifecycleContract,
  seenKeysContract,
  storePolicyContract,
];
