import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { HookrelayError, asHookrelayError, toErrorBody } from '../errors.js';

/** The JSON 404 every unknown path gets. */
export const notFoundHandler: RequestHandler = (req, res) => {
  const err = new HookrelayError('not_found', `No route for ${req.method} ${req.path}.`);
  res.status(err.status).json(toErrorBody(err));
};

/** The one place express-served routes turn thrown errors into status codes and error bodies. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    // express.json() and friends report malformed bodies with a status and a `type`.
    const parserStatus = (err as { status?: number; type?: string }).status;
    const error =
      err instanceof HookrelayError
        ? err
        : parserStatus === 400 && (err as { type?: string }).type === 'entity.parse.failed'
          ? new HookrelayError('invalid_json', 'The body is not valid JSON.')
          : parserStatus === 413
            ? new HookrelayError('payload_too_large', 'The body is too large.')
            : parserStatus === 400 && err instanceof URIError
              ? new HookrelayError('bad_request', 'The path is not valid percent-encoding.')
              : asHookrelayError(err);
    if (error.status >= 500) logger.error({ err: error.cause ?? err, path: req.path }, 'request failed');
    if (res.headersSent) return;
    res.status(error.status).json(toErrorBody(error));
  };
}
