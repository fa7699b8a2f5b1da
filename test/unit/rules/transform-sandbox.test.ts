import { afterEach, describe, expect, it } from 'vitest';
import { TransformError } from '../../../src/rules/transform.js';
import { DEFAULT_SANDBOX_LIMITS, TransformSandbox, type SandboxLimits } from '../../../src/rules/transform-sandbox.js';
import { purchaseInput } from './rule-dir-fixture.js';

/**
 * One $pad call that builds a 40 MB string: seconds in a single built-in call, which jsonata cannot
 * interrupt (the tests that run it give the thread heap enough for it, so it meets the time limit).
 */
const STUCK_IN_ONE_BUILT_IN = '$length($pad("", 40000000, "x"))';
/** A recursive function that doubles a string 25 times: 8 bytes become 268,435,456. */
const DOUBLED_25_TIMES = '( $d := function($s, $n) { $n = 0 ? $s : $d($s & $s, $n - 1) }; { "x": $d("01234567", 25) } )';

const sandboxes: TransformSandbox[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.close()));
});

function sandbox(limits: Partial<SandboxLimits> = {}): TransformSandbox {
  const created = new TransformSandbox({ ...DEFAULT_SANDBOX_LIMITS, ...limits });
  sandboxes.push(created);
  return created;
}

async function refusal(pending: Promise<unknown>): Promise<TransformError> {
  const error = await pending.then(() => null, (err: unknown) => err);
  expect(error).toBeInstanceOf(TransformError);
  return error as TransformError;
}

describe('TransformSandbox', () => {
  it('renders a transform in a thread of its own, with $event and $source bound', async () => {
    const rendered = await sandbox().render('{ "email": result.email, "kind": $event, "from": $source }', purchaseInput({ source: 'shop' }));
    expect(JSON.parse(rendered.body.toString())).toEqual({ email: 'buyer@example.com', kind: 'transfer:succeeded', from: 'shop' });
    expect(rendered.contentType).toBe('application/json');
  });

  it('ends a transform stuck in one built-in at its time limit, and replaces its thread', async () => {
    const pool = sandbox({ timeoutMs: 200, workers: 1, maxMemoryMb: 256 });
    await pool.render('{ "warm": true }', purchaseInput());
    expect(pool.threadsStarted).toBe(1);
    const error = await refusal(pool.render(STUCK_IN_ONE_BUILT_IN, purchaseInput()));
    expect(error.code).toBe('transform_timeout');
    expect(error.message).toBe('transform exceeded its time limit of 200 ms');
    const after = await pool.render('{ "after": true }', purchaseInput());
    expect(after.body.toString()).toBe('{"after":true}');
    expect(pool.threadsStarted).toBe(2);
  });

  it('leaves a thread to other transforms while one expression is stuck on every render', async () => {
    const pool = sandbox({ timeoutMs: 300, workers: 2, maxMemoryMb: 256 });
    await Promise.all([pool.render('1', purchaseInput()), pool.render('2', purchaseInput())]);
    expect(pool.threadsStarted).toBe(2);
    const settled: string[] = [];
    // Queued first, three of the same stuck expression: they take one thread, one after the other.
    const stuck = [1, 2, 3].map(() => refusal(pool.render(STUCK_IN_ONE_BUILT_IN, purchaseInput())).then((err) => settled.push(`stuck: ${err.code}`)));
    const normal = pool.render('{ "n": result.quantity }', purchaseInput()).then((rendered) => settled.push(`normal: ${rendered.body.toString()}`));
    await Promise.all([...stuck, normal]);
    expect(settled).toEqual(['normal: {"n":2}', 'stuck: transform_timeout', 'stuck: transform_timeout', 'stuck: transform_timeout']);
  });

  it('stops endless recursion and a long $map at the time limit', async () => {
    const pool = sandbox({ timeoutMs: 300, workers: 1 });
    for (const expression of ['( $loop := function() { $loop() }; $loop() )', '$map([1..99999], function($v) { $string($v) & $pad("", 200, "x") })']) {
      const error = await refusal(pool.render(expression, purchaseInput()));
      expect(error.message).toBe('transform exceeded its time limit of 300 ms');
    }
  });

  it('refuses an output over the cap before serialising it, and measures one near it exactly', async () => {
    const pool = sandbox({ maxOutputBytes: 100 });
    const doubled = await refusal(pool.render(DOUBLED_25_TIMES, purchaseInput()));
    expect(doubled.code).toBe('transform_too_large');
    expect(doubled.message).toBe('transform produced at least 268435464 bytes, more than the 100 allowed');
    // 60 two-byte characters: 62 by length, 122 bytes once encoded.
    const accented = await refusal(pool.render('$pad("", 60, "é")', purchaseInput()));
    expect(accented.message).toBe('transform produced 122 bytes, more than the 100 allowed');
    expect((await pool.render('$pad("", 98, "x")', purchaseInput())).body.length).toBe(100);
  });

  it('ends a transform that outgrows its heap, and renders the next one', async () => {
    const pool = sandbox({ maxMemoryMb: 16, timeoutMs: 60_000, workers: 1 });
    const error = await refusal(pool.render('$count($map([1..90000], function($v) { $pad("", 1000, $string($v % 10)) }))', purchaseInput()));
    expect(error.code).toBe('transform_out_of_memory');
    expect(error.message).toBe('transform exceeded its memory limit of 16 MiB');
    expect((await pool.render('{ "n": 1 }', purchaseInput())).body.toString()).toBe('{"n":1}');
  }, 120_000);

  it('refuses renders once closed', async () => {
    const pool = sandbox();
    await pool.close();
    expect((await refusal(pool.render('1', purchaseInput()))).message).toBe('the transform sandbox is closed');
  });
});
