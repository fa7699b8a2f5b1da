import { describe, expect, it } from 'vitest';
import { compileTransform, TransformError, type RuleTransform } from '../../../src/rules/transform.js';
import { purchaseInput } from './rule-dir-fixture.js';

function transform(expression: string | undefined): RuleTransform {
  const compiled = compileTransform(expression);
  if (!compiled.ok) throw new Error(compiled.message);
  return compiled.transform;
}

async function transformError(expression: string, input = purchaseInput()): Promise<TransformError> {
  const error = await transform(expression).render(input).then(
    () => null,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(TransformError);
  return error as TransformError;
}

describe('compileTransform', () => {
  it('forwards the original bytes untouched when there is no transform', async () => {
    const input = purchaseInput();
    const rendered = await transform(undefined).render(input);
    expect(rendered.body).toBe(input.raw);
    expect(rendered.body.toString()).toBe(JSON.stringify(input.body, null, 3));
    expect(rendered.contentType).toBe('application/json');
  });

  it('renders the JSONata result as a JSON body', async () => {
    const rendered = await transform('{ "email": result.email, "tokens": result.claimedTokens.tokenIds }').render(purchaseInput());
    expect(JSON.parse(rendered.body.toString())).toEqual({ email: 'buyer@example.com', tokens: ['101', '102'] });
    expect(rendered.contentType).toBe('application/json');
  });

  it('binds $event and $source', async () => {
    const rendered = await transform('{ "kind": $event, "from": $source }').render(purchaseInput({ source: 'shop' }));
    expect(JSON.parse(rendered.body.toString())).toEqual({ kind: 'transfer:succeeded', from: 'shop' });
  });

  it('reports a syntax error with its position at compile time', () => {
    const compiled = compileTransform('{ "email": result.email ');
    expect(compiled.ok).toBe(false);
    if (compiled.ok) return;
    expect(compiled.message).toBe('JSONata syntax error: Expected "}" before end of expression');
    expect(compiled.position).toBe(24);
  });

  it('throws a TransformError when the expression yields nothing', async () => {
    const error = await transformError('result.noSuchField');
    expect(error.code).toBe('undefined_result');
    expect(error.message).toMatch(/produced no value/);
  });

  it('throws a TransformError carrying jsonata\'s code when evaluation fails', async () => {
    const error = await transformError('result.email + 1');
    expect(error.code).toBe('T2001');
    expect(error.message).toMatch(/^transform failed at position \d+: T2001 The left side of the "\+" operator must evaluate to a number/);
  });

  it('stops runaway recursion and endless loops instead of hanging', async () => {
    const started = Date.now();
    expect((await transformError('( $f := function($n) { $f($n + 1) + 1 }; $f(0) )')).code).toBe('D1011');
    const endless = await transformError('( $loop := function() { $loop() }; $loop() )');
    expect(endless.code).toBe('transform_timeout');
    expect(endless.message).toBe('transform exceeded its time limit of 1000 ms');
    expect((await transformError('$count([1..10000000])')).code).toBe('D2015');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
