/** Whether a node takes webhooks now, and why: `/readyz` says only the first, the admin API both. */
export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, unknown>;
}
