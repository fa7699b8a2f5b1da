import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * A middleware standing for one that is built on its first request: code most requests never need (the
 * admin API with its OpenAPI document, the console) is neither loaded nor kept in memory until then.
 * Requests arriving while it loads wait for it; a failed load goes to the error handler and is tried
 * again on the next request.
 */
export function lazyHandler(load: () => Promise<RequestHandler>): RequestHandler {
  let loading: Promise<RequestHandler> | undefined;
  return (req: Request, res: Response, next: NextFunction): void => {
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    loading.then((handler) => handler(req, res, next), next);
  };
}
