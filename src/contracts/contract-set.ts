import type { ValidateFunction } from 'ajv';
import type { StoredIssue } from '../store/quarantine-store.js';
import { contractIssues } from './contract-compiler.js';

/** `warn`: store, forward, record the violation; `quarantine`: store, do not route until released. */
export type ContractMode = 'warn' | 'quarantine';

export interface LoadedContract {
  /** File name within the contracts directory. */
  file: string;
  source: string;
  event: string;
  mode: ContractMode;
  validate: ValidateFunction;
}

export interface ContractViolation {
  file: string;
  mode: ContractMode;
  issues: StoredIssue[];
}

const keyOf = (source: string, event: string): string => `${source}\u0000${event}`;

/** The pinned contracts of one load, by (source, event). */
export class ContractSet {
  private readonly byKey: Map<string, LoadedContract>;

  constructor(readonly contracts: readonly LoadedContract[]) {
    this.byKey = new Map(contracts.map((c) => [keyOf(c.source, c.event), c]));
  }

  get size(): number {
    return this.byKey.size;
  }

  /** The contract of (source, event), if any, and what the body violates of it; null when none or none violated. */
  check(source: string, event: string, body: unknown): ContractViolation | null {
    if (this.byKey.size === 0) return null;
    const contract = this.byKey.get(keyOf(source, event));
    if (!contract || contract.validate(body)) return null;
    return { file: contract.file, mode: contract.mode, issues: contractIssues(contract.validate.errors) };
  }

  /** Whether the contract of (source, event) accepts the body (true when there is none). */
  accepts(source: string, event: string, body: unknown): boolean {
    return this.check(source, event, body) === null;
  }

  contractFor(source: string, event: string): LoadedContract | undefined {
    return this.byKey.get(keyOf(source, event));
  }
}

export const NO_CONTRACTS = new ContractSet([]);
