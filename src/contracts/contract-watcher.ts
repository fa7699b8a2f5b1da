import { contractFingerprint, invalidContractsError, loadContracts } from './contract-files.js';
import type { ContractSet } from './contract-set.js';

export interface ContractLogger {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** How often the contracts directory is looked at for changes. */
export const CONTRACT_POLL_MS = 2_000;

/**
 * Keeps the pinned contracts in step with their directory, as the rule watcher does for rules: a changed file
 * set is compiled again (once per change); a bad edit keeps the last good contracts in use and is logged.
 */
export class ContractWatcher {
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  lastError: string[] | null = null;

  private constructor(
    private readonly dir: string,
    private contracts: ContractSet,
    private fingerprint: string,
    private readonly logger: ContractLogger,
  ) {}

  /** Loads the contracts once; an invalid first load throws `invalid_contracts` listing every problem. */
  static async start(dir: string, logger: ContractLogger, pollMs = CONTRACT_POLL_MS): Promise<ContractWatcher> {
    const fingerprint = await contractFingerprint(dir);
    const load = await loadContracts(dir);
    if (!load.ok) throw invalidContractsError(load.errors);
    const watcher = new ContractWatcher(dir, load.contracts, fingerprint, logger);
    if (load.contracts.size > 0) logger.info({ dir, contracts: load.contracts.size }, 'pinned contracts loaded');
    if (pollMs > 0) {
      watcher.timer = setInterval(() => void watcher.check(), pollMs);
      watcher.timer.unref();
    }
    return watcher;
  }

  current(): ContractSet {
    return this.contracts;
  }

  /** Reloads when the files changed; safe to call at any time (a reload already running is not doubled). */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const fingerprint = await contractFingerprint(this.dir);
      if (fingerprint === this.fingerprint) return;
      this.fingerprint = fingerprint;
      const load = await loadContracts(this.dir);
      if (load.ok) {
        this.contracts = load.contracts;
        this.lastError = null;
        this.logger.info({ dir: this.dir, contracts: load.contracts.size }, 'pinned contracts reloaded');
      } else {
        this.lastError = load.errors;
        this.logger.error({ dir: this.dir, errors: load.errors }, 'pinned contracts not reloaded: the last good ones stay in use');
      }
    } catch (err) {
      this.logger.error({ dir: this.dir, err }, 'reading the pinned contracts failed');
    } finally {
      this.checking = false;
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
