// One sandbox thread: compiles and evaluates transforms for the pool in transform-sandbox.ts, one at a
// time. The pool ends this thread when a transform outlives its time limit, and starts another.
import { parentPort, workerData } from 'node:worker_threads';
import jsonata from 'jsonata';
import { evaluateTransform, type EvaluationInput, type EvaluationLimits } from './transform-evaluate.js';
import { jsonataOptions } from './transform.js';
import type { FromTransformThread, ToTransformThread, TransformAnswer } from './transform-messages.js';

const port = parentPort!;
const limits = workerData as EvaluationLimits;

/** Compiled expressions by text: a rule set has few transforms, each evaluated many times. */
const MAX_COMPILED = 256;
const compiled = new Map<string, jsonata.Expression>();

function compile(expression: string): jsonata.Expression {
  let expr = compiled.get(expression);
  if (expr === undefined) {
    expr = jsonata(expression, jsonataOptions(limits.timeoutMs));
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(expression, expr);
  }
  return expr;
}

async function run(task: ToTransformThread): Promise<TransformAnswer> {
  let expr: jsonata.Expression;
  try {
    expr = compile(task.expression);
  } catch (err) {
    return { id: task.id, ok: false, code: 'syntax_error', message: `JSONata syntax error: ${(err as Error).message}` };
  }
  const input: EvaluationInput = { body: task.body, event: task.event, source: task.source };
  return { id: task.id, ...(await evaluateTransform(expr, input, limits)) };
}

port.on('message', (task: ToTransformThread) => {
  void run(task).then((answer) => {
    if (answer.ok) port.postMessage(answer, [answer.body.buffer as ArrayBuffer]);
    else port.postMessage(answer);
  });
});
port.postMessage({ ready: true } satisfies FromTransformThread);
