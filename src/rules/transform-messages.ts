import type { EvaluationResult } from './transform-evaluate.js';

/** One transform to evaluate, with the event it reads. */
export interface ToTransformThread {
  id: number;
  expression: string;
  body: unknown;
  event: string;
  source: string;
}

/** The answer to task `id`. */
export type TransformAnswer = { id: number } & EvaluationResult;

/** The thread has loaded and takes tasks; or an answer. */
export type FromTransformThread = { ready: true } | TransformAnswer;
