import type { RequestHandler } from 'express';
import type { Logger } from '../../log.js';

/** One log line per request, written when the response finishes. Query strings are left out (cursors, noise). */
export function logRequests(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    // Read now: routers rewrite req.url while they handle the request.
    const path = req.path;
    res.on('finish', () => {
      logger.info(
        { method: req.method, path, status: res.statusCode, durationMs: Math.round(performance.now() - started) },
        'mock checkout request',
      );
    });
    next();
  };
}
