import pRetry from 'p-retry';
import type { Logger } from '../log.js';
import { formatTimestamp } from './timestamps.js';

/** The slice of `fetch` the sender needs; the global fetch and undici's both fit. */
export type FetchLike = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string; redirect: 'manual'; signal: AbortSignal },
) => Promise<{ status: number; body: { cancel(): Promise<void> } | null }>;

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  /** Milliseconds before the first retry; doubles each time. */
  minTimeout: number;
}

export interface SenderDeps {
  fetch: FetchLike;
  retry: RetryPolicy;
  timeoutMs: number;
  logger: Logger;
  now: () => Date;
}

export interface DeliveryOutcome {
  status: number | null;
  ok: boolean;
  error: string | null;
  attempts: number;
  at: string;
}

/** Thrown inside the retried function for outcomes worth another try (network error, timeout, 5xx). */
class RetryableDeliveryError extends Error {}

/**
 * POSTs one webhook, retrying network errors, time-outs and 5xx with short exponential back-off.
 * Other statuses end it at once; redirects are not followed (a webhook is not re-sent elsewhere).
 */
export async function postWebhook(
  request: { url: string; body: string; headers: Record<string, string> },
  deps: SenderDeps,
): Promise<DeliveryOutcome> {
  const at = formatTimestamp(deps.now());
  let attempts = 0;
  let status: number | null = null;
  let error: string | null = null;

  const attempt = async (): Promise<void> => {
    attempts += 1;
    const started = performance.now();
    try {
      const response = await deps.fetch(request.url, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(deps.timeoutMs),
      });
      status = response.status;
      await response.body?.cancel().catch(() => undefined);
      error = status >= 200 && status < 300 ? null : `HTTP ${status}`;
    } catch (err) {
      status = null;
      error = describeNetworkError(err, deps.timeoutMs);
    }
    const durationMs = Math.round(performance.now() - started);
    deps.logger.info({ url: request.url, attempt: attempts, status, error, durationMs }, 'mock webhook attempt');
    if (status === null || status >= 500) throw new RetryableDeliveryError(error ?? 'retryable');
  };

  await pRetry(attempt, {
    retries: deps.retry.retries,
    minTimeout: deps.retry.minTimeout,
    factor: 2,
    unref: true,
  }).catch(() => undefined); // the last status and error are what we report

  return { status, ok: status !== null && status >= 200 && status < 300, error, attempts, at };
}

function describeNetworkError(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return `timed out after ${timeoutMs} ms`;
  }
  if (err instanceof Error) {
    const cause = err.cause as { code?: string; message?: string } | undefined;
    const detail = cause?.code ?? cause?.message;
    return detail ? `${err.message}: ${detail}` : err.message;
  }
  return String(err);
}
