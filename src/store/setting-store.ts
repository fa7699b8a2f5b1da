/**
 * Values every node shares without configuration (generated ingest secrets, the admin token): the first writer's.
 */
export interface SettingStore {
  /**
   * Stores `value` under `name` unless a value is stored there already; returns the stored value. The first
   * writer wins, also between nodes that start at the same moment, so all of them end up with one value.
   */
  claimSetting(name: string, value: string): Promise<string>;
  /** The value stored under `name`, or null. */
  getSetting(name: string): Promise<string | null>;
}
