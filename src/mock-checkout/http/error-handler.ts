import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { HookrelayError, asHookrelayError, toErrorBody } from '../../errors.js';
import type { Logger } from '../../log.js';
import { errorPage } from '../html/buyer-pages.js';

/** API and automation routes answer JSON; buyer pages and the dashboard answer HTML. */
function wantsJson(req: Request): boolean {
  return req.originalUrl.startsWith('/api/') || req.originalUrl.startsWith('/mock/');
}

/** Errors thrown by express's body parsers, by their `type`. */
function fromBodyParser(err: unknown): HookrelayError | undefined {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.parse.failed') return new HookrelayError('invalid_json', 'request body is not valid JSON');
  if (type === 'entity.too.large') return new HookrelayError('payload_too_large', 'request body is too large');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new HookrelayError('unsupported_media_type', 'request body encoding is not supported');
  }
  return undefined;
}

export const notFoundFallback: RequestHandler = (req) => {
  throw new HookrelayError('not_found', `no route for ${req.method} ${req.path}`);
};

/** The mock's one error handler: every HookrelayError becomes its status plus `{error:{code,message,details}}` or a page. */
export function createErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const error = fromBodyParser(err) ?? asHookrelayError(err);
    if (error.status >= 500) logger.error({ err, method: req.method, url: req.originalUrl }, 'mock checkout request failed');
    res.status(error.status);
    if (wantsJson(req)) {
      res.json(toErrorBody(error));
    } else {
      const path = req.originalUrl.split('?')[0] ?? '';
      const aboutCheckout = /^\/(checkout|dashboard\/checkouts)\//.test(path);
      res.type('html').send(errorPage({ status: error.status, code: error.code, message: error.message, aboutCheckout }));
    }
  };
}
