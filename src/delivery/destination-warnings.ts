import type { RuleSet } from '../rules/types.js';
import { normaliseHost } from './host-normalisation.js';
import type { SsrfGuard } from './ssrf-guard.js';

/**
 * Enabled rules whose destination is a literal address the SSRF guard will refuse: said at load time, so
 * a first run against a local sink explains itself instead of only dead-lettering. Host names are not
 * resolved here (the guard checks them on every connection).
 */
export function refusedDestinationWarnings(ruleSet: RuleSet, guard: SsrfGuard): string[] {
  const warnings: string[] = [];
  for (const rule of ruleSet.rules) {
    if (!rule.enabled) continue;
    let hostname: string;
    try {
      hostname = new URL(rule.destination.url).hostname;
    } catch {
      continue;
    }
    const host = normaliseHost(hostname);
    if (host?.kind !== 'ip') continue;
    const decision = guard.checkAddress(host.address);
    if (!decision.allowed) {
      // The guard's reason names the setting and the entry that would allow the address.
      warnings.push(`rule "${rule.id}" (${rule.file}:${rule.line}) sends to ${host.address}, which is refused: ${decision.reason}`);
    }
  }
  return warnings;
}
