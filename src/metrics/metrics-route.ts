import { timingSafeEqual } from 'node:crypto';
import type { Express, Request } from 'express';
import { HookrelayError } from '../errors.js';
import type { FailedAuthLimiter } from '../admin/failed-auth-limiter.js';
import type { HookrelayMetrics } from './hookrelay-metrics.js';

export interface MetricsRouteOptions {
  metrics: HookrelayMetrics;
  /** When set, scrapes must send `Authorization: Bearer <token>`. */
  token?: string;
  /** Counts wrong tokens per client address. */
  limiter?: FailedAuthLimiter;
}

function bearerMatches(req: Request, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7).trim() : '');
  const expected = Buffer.from(token);
  // timingSafeEqual needs equal lengths; the length itself is not the secret.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** GET /metrics in the Prometheus text format. */
export function mountMetricsRoute(app: Express, options: MetricsRouteOptions): void {
  app.get('/metrics', async (req, res) => {
    if (options.token !== undefined) options.limiter?.refuseIfLimited(req, res);
    if (options.token !== undefined && !bearerMatches(req, options.token)) {
      // Only a token sent counts as a failed attempt; a scrape without one is misconfigured, not guessing.
      if (req.headers.authorization !== undefined) options.limiter?.recordFailed(req);
      res.setHeader('www-authenticate', 'Bearer realm="metrics"');
      throw new HookrelayError('unauthorized', 'GET /metrics needs Authorization: Bearer <metrics token>.');
    }
    const text = await options.metrics.scrape();
    res.setHeader('content-type', options.metrics.contentType);
    res.setHeader('cache-control', 'no-store');
    res.send(text);
  });
}
