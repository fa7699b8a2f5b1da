import { watch, type FSWatcher } from 'node:fs';
import type { Env } from './env-references.js';
import { compileRuleFiles } from './loader.js';
import { formatRuleFileError, invalidRulesError } from './rule-file-error.js';
import { readRuleFiles, type RuleFileLimits } from './rule-files.js';
import type { RuleSet } from './types.js';

export interface RuleLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface RuleSetWatcherOptions {
  dir: string;
  /** Size and time bounds of reading the files (defaults: RULE_FILE_LIMITS). */
  limits?: RuleFileLimits;
  env: Env;
  logger: RuleLogger;
  /** Quiet time after a change event before reloading; editors write a file in several steps. */
  debounceMs?: number;
  /** Fallback check of the files' contents, for file systems and editors fs.watch misses. */
  pollIntervalMs?: number;
  /** Use fs.watch as well as polling (default true). */
  watch?: boolean;
  /**
   * Keeps a rule set (in the store, by its hash) before it is used: every delivery planned with a set can
   * then be sent with it by any node. A set that cannot be kept is not used; the next check tries again.
   */
  keep?: (ruleSet: RuleSet) => Promise<void>;
}

export interface RuleSetError {
  at: Date;
  errors: string[];
}

export interface RuleSetStatus {
  hash: string;
  loadedAt: Date;
  ruleCount: number;
  /** Why the files on disk are not the rules in use; null when they are. */
  lastError: RuleSetError | null;
  warnings: string[];
}

interface Listeners {
  reload: (ruleSet: RuleSet) => void;
  error: (error: RuleSetError) => void;
}

/**
 * Keeps the rule set in step with the rule directory. A bad edit never replaces a good set: the last
 * good one stays in use and the problem is reported (status, event, log) until a good edit arrives.
 */
export class RuleSetWatcher {
  private ruleSet: RuleSet;
  private warnings: string[];
  private lastError: RuleSetError | null = null;
  /** Hash of the files last compiled, good or bad, so an unchanged bad edit is reported once. */
  private lastSeenHash: string;
  private readonly listeners: { [K in keyof Listeners]: Set<Listeners[K]> } = { reload: new Set(), error: new Set() };
  private fsWatcher: FSWatcher | null = null;
  private debounceTimer: NodeJS.Timeout | null = null;
  private readonly pollTimer: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private rerun = false;
  private closed = false;

  /** Loads the rules once; an invalid first load throws an `invalid_rules` error listing every problem. */
  static async start(options: RuleSetWatcherOptions): Promise<RuleSetWatcher> {
    const snapshot = await readRuleFiles(options.dir, options.limits);
    const result = compileRuleFiles(snapshot, options.env);
    if (!result.ok) throw invalidRulesError(result.errors);
    await options.keep?.(result.ruleSet);
    return new RuleSetWatcher(options, result.ruleSet, result.warnings);
  }

  private constructor(
    private readonly options: RuleSetWatcherOptions,
    initial: RuleSet,
    warnings: string[],
  ) {
    this.ruleSet = initial;
    this.warnings = warnings;
    this.lastSeenHash = initial.hash;
    this.logLoaded('rules loaded');
    this.ensureFsWatcher();
    this.pollTimer = setInterval(() => {
      this.ensureFsWatcher();
      void this.check();
    }, options.pollIntervalMs ?? 2_000);
    this.pollTimer.unref();
  }

  current(): RuleSet {
    return this.ruleSet;
  }

  status(): RuleSetStatus {
    const { hash, loadedAt, rules } = this.ruleSet;
    return { hash, loadedAt, ruleCount: rules.length, lastError: this.lastError, warnings: this.warnings };
  }

  on<K extends keyof Listeners>(event: K, listener: Listeners[K]): this {
    this.listeners[event].add(listener);
    return this;
  }

  off<K extends keyof Listeners>(event: K, listener: Listeners[K]): this {
    this.listeners[event].delete(listener);
    return this;
  }

  /** Reads the directory now and reloads if the files changed; resolves once that is done. */
  check(): Promise<void> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.rerun = false;
        await this.checkOnce();
      } while (this.rerun && !this.closed);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.pollTimer);
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    this.fsWatcher?.close();
    this.fsWatcher = null;
  }

  private async checkOnce(): Promise<void> {
    let snapshot;
    try {
      snapshot = await readRuleFiles(this.options.dir, this.options.limits);
    } catch (err) {
      const message = `${this.options.dir}: cannot read the rules directory: ${(err as Error).message}`;
      if (this.lastError?.errors[0] !== message) this.fail([message]); // once, not on every poll
      return;
    }
    if (this.closed || snapshot.hash === this.lastSeenHash) return;
    this.lastSeenHash = snapshot.hash;
    const result = compileRuleFiles(snapshot, this.options.env);
    if (!result.ok) {
      this.fail(result.errors.map(formatRuleFileError));
      return;
    }
    try {
      await this.options.keep?.(result.ruleSet);
    } catch (err) {
      this.lastSeenHash = this.ruleSet.hash; // not kept, so not used: the next check tries again
      this.options.logger.error({ err, hash: result.ruleSet.hash, keptHash: this.ruleSet.hash }, 'the new rule set could not be stored; keeping the last one');
      return;
    }
    if (this.closed) return;
    // One assignment: callers of current() see the old set or the new one, never a mix.
    this.ruleSet = result.ruleSet;
    this.warnings = result.warnings;
    this.lastError = null;
    this.logLoaded('rules reloaded');
    this.emit('reload', result.ruleSet);
  }

  private fail(errors: string[]): void {
    this.lastError = { at: new Date(), errors };
    this.options.logger.error({ errors, keptHash: this.ruleSet.hash }, 'rule files are invalid; keeping the last good rules');
    this.emit('error', this.lastError);
  }

  private logLoaded(message: string): void {
    const { hash, rules, files } = this.ruleSet;
    this.options.logger.info({ hash, ruleCount: rules.length, files, dir: this.options.dir }, message);
    if (this.warnings.length > 0) this.options.logger.warn({ warnings: this.warnings }, 'rule warnings');
  }

  private emit<K extends keyof Listeners>(event: K, value: Parameters<Listeners[K]>[0]): void {
    for (const listener of this.listeners[event]) {
      try {
        (listener as (arg: typeof value) => void)(value);
      } catch (err) {
        this.options.logger.error({ err, event }, 'rule set listener failed');
      }
    }
  }

  /** fs.watch is best effort (the directory may not exist yet, or the platform may refuse); polling stays. */
  private ensureFsWatcher(): void {
    if (this.fsWatcher || this.closed || this.options.watch === false) return;
    try {
      this.fsWatcher = watch(this.options.dir, { persistent: false }, () => this.scheduleCheck());
      this.fsWatcher.on('error', (err) => {
        this.options.logger.warn({ err, dir: this.options.dir }, 'watching the rules directory failed; polling only');
        this.fsWatcher?.close();
        this.fsWatcher = null;
      });
    } catch {
      this.fsWatcher = null;
    }
  }

  private scheduleCheck(): void {
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => void this.check(), this.options.debounceMs ?? 150);
    this.debounceTimer.unref();
  }
}
