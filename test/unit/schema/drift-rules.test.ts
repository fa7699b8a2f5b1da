import { describe, expect, it } from 'vitest';
import { compareFields, diffContract, exportContract } from '../../../src/schema/contract.js';
import { expectedFields } from '../../../src/schema/json-schema-fields.js';
import { rulesTouchedBy, wherePaths } from '../../../src/schema/rules-touched.js';
import { DEFAULT_LEARN_SETTINGS, SchemaAggregate } from '../../../src/schema/schema-aggregate.js';
import { specFieldsOf } from '../../../src/schema/spec-fields.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import type { RuleDescription } from '../../../src/rules/types.js';

let nextId = 1;
const at = (source: string, event: string) => ({ id: nextId++, source, event, receivedAt: 1_000 + nextId });

function learn<B extends { event: string }>(aggregate: SchemaAggregate, body: B, source = 'checkout') {
  return aggregate.observe(at(source, body.event), body);
}

describe('SchemaAggregate drift rules', () => {
  it('reports nothing for the first event of a source, then a new field, a type change and a new event name once each', () => {
    const aggregate = new SchemaAggregate(DEFAULT_LEARN_SETTINGS);
    expect(learn(aggregate, { event: 'a', result: { id: 'x', n: 1 } })).toEqual([]);
    expect(learn(aggregate, { event: 'a', result: { id: 'y', n: 2 } })).toEqual([]);
    expect(learn(aggregate, { event: 'a', result: { id: 'z', n: 3, extra: { deep: 1 } } })).toMatchObject([{ kind: 'field_added', path: 'result.extra', after: ['object'] }]);
    expect(learn(aggregate, { event: 'a', result: { id: 'z', n: '3' } })).toMatchObject([{ kind: 'type_changed', path: 'result.n', before: ['number'], after: ['string'] }]);
    expect(learn(aggregate, { event: 'a', result: { id: 'z', n: '4' } })).toEqual([]);
    expect(learn(aggregate, { event: 'b', result: { id: 'q' } })).toMatchObject([{ kind: 'event_added', event: 'b', path: '' }]);
    expect(learn(aggregate, { event: 'c', result: { id: 'q' } }, 'other-source')).toEqual([]);
  });

  it('reports a field that disappears only after it was in every one of the last N events', () => {
    const aggregate = new SchemaAggregate({ ...DEFAULT_LEARN_SETTINGS, disappearAfter: 3 });
    learn(aggregate, { event: 'a', result: { id: '1', opt: 1, gone: { x: 1 } } });
    expect(learn(aggregate, { event: 'a', result: { id: '2', gone: { x: 1 } } })).toEqual([]);
    learn(aggregate, { event: 'a', result: { id: '3', gone: { x: 1 } } });
    const drifts = learn(aggregate, { event: 'a', result: { id: '4' } });
    expect(drifts).toMatchObject([{ kind: 'field_removed', path: 'result.gone', before: ['object'] }]);
    expect(drifts).toHaveLength(1);
  });

  it('caps the fields of an event type and counts the rest as truncated', () => {
    const aggregate = new SchemaAggregate({ ...DEFAULT_LEARN_SETTINGS, maxFields: 3 });
    learn(aggregate, { event: 'a', result: { id: '1', b: 1, c: 2 } });
    const [schema] = aggregate.all();
    expect(schema!.fields.map((f) => f.path)).toEqual(['event', 'result', 'result.id']);
    expect(schema!.truncated).toBe(2);
  });

  it('cuts a body with more paths than maxFields: the first learned, the rest counted, nothing said missing', () => {
    const aggregate = new SchemaAggregate({ ...DEFAULT_LEARN_SETTINGS, maxFields: 10, disappearAfter: 2 });
    const keys = (prefix: string, n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
    learn(aggregate, { event: 'a', ...keys('k', 6) });
    learn(aggregate, { event: 'a', ...keys('k', 6) });
    // 7 fields known; this body shows `event` and 50 new paths: 3 fit, 6 more are counted past the field cap,
    // and past 10 distinct paths the body is cut (41 sightings) and says nothing about k0..k5.
    const drifts = learn(aggregate, { event: 'a', ...keys('x', 50) });
    expect(drifts.map((d) => [d.kind, d.path])).toEqual([
      ['field_added', 'x0'],
      ['field_added', 'x1'],
      ['field_added', 'x2'],
    ]);
    const [schema] = aggregate.all();
    expect(schema!.fields).toHaveLength(10);
    expect(schema!.truncated).toBe(47);
    expect(schema!.fields.find((f) => f.path === 'k0')).toMatchObject({ present: 2, streak: 0 });
  });

  it('counts a path once per body however often the body shows it, with every type it shows there', () => {
    const aggregate = new SchemaAggregate(DEFAULT_LEARN_SETTINGS);
    learn(aggregate, { event: 'a', items: ['first', 2, 'third'] });
    expect(learn(aggregate, { event: 'a', items: [1, 'x', 3] })).toEqual([]);
    expect(learn(aggregate, { event: 'a', items: [4] })).toEqual([]);
    expect(learn(aggregate, { event: 'a', items: [true, 5] })).toMatchObject([{ kind: 'type_changed', path: 'items[]', before: ['string', 'number'], after: ['number', 'boolean'] }]);
    const items = aggregate.all()[0]!.fields.find((f) => f.path === 'items[]')!;
    expect(items).toMatchObject({ present: 4, types: { string: 2, number: 4, boolean: 1 }, example: 'true' });
  });

  it('caps the event types it learns', () => {
    const aggregate = new SchemaAggregate({ ...DEFAULT_LEARN_SETTINGS, maxEventTypes: 1 });
    learn(aggregate, { event: 'a', result: {} });
    expect(learn(aggregate, { event: 'b', result: {} })).toEqual([]);
    expect(aggregate.all()).toHaveLength(1);
    expect(aggregate.refusedEvents).toBe(1);
  });

  it('counts presence, keeps first and last seen and a masked example; changed schemas once', () => {
    const aggregate = new SchemaAggregate(DEFAULT_LEARN_SETTINGS);
    learn(aggregate, { event: 'a', result: { email: 'a@b.example' } });
    learn(aggregate, { event: 'a', result: {} });
    const [schema] = aggregate.takeChanged();
    const email = schema!.fields.find((f) => f.path === 'result.email')!;
    expect(email).toMatchObject({ present: 1, types: { string: 1 }, example: '"***@b.example"' });
    expect(schema!.eventsSeen).toBe(2);
    expect(aggregate.takeChanged()).toEqual([]);
  });

  it('shows the latest example a save finds, masked, and none once the path holds only an object', () => {
    const aggregate = new SchemaAggregate(DEFAULT_LEARN_SETTINGS);
    learn(aggregate, { event: 'a', result: { email: 'a@first.example', note: 'x' } });
    learn(aggregate, { event: 'a', result: { email: 'b@second.example', note: 'y' } });
    const fieldsOf = (schema: { fields: { path: string; example: string | null }[] } | undefined) => new Map(schema!.fields.map((f) => [f.path, f.example]));
    const first = fieldsOf(aggregate.takeChanged()[0]);
    expect(first.get('result.email')).toBe('"***@second.example"');
    expect(first.get('result.note')).toBe('"y"');
    learn(aggregate, { event: 'a', result: { email: 'c@third.example', note: { nested: true } } });
    const second = fieldsOf(aggregate.all()[0]);
    expect(second.get('result.email')).toBe('"***@third.example"');
    expect(second.get('result.note')).toBeNull();
  });
});

describe('contracts', () => {
  it('exports the observed schema as a pinned contract that diffs clean against itself, and finds drift', () => {
    const aggregate = new SchemaAggregate(DEFAULT_LEARN_SETTINGS);
    for (let i = 0; i < 3; i += 1) learn(aggregate, sampleTransferSucceeded());
    const [schema] = aggregate.all();
    const contract = exportContract(schema!);
    expect(contract).toMatchObject({ 'x-hookrelay-source': 'checkout', 'x-hookrelay-event': 'transfer:succeeded', 'x-hookrelay-mode': 'warn', $schema: 'https://json-schema.org/draft/2020-12/schema' });
    expect((contract as unknown as { required: string[] }).required).toEqual(['event', 'result']);
    expect(diffContract(contract, schema!)).toEqual([]);
    const drifted = sampleTransferSucceeded();
    drifted.result.totalPriceUsd = '10';
    drifted.result.couponCode = 'X';
    learn(aggregate, drifted);
    expect(diffContract(contract, aggregate.all()[0]!).map((d) => [d.path, d.kind])).toEqual([
      ['result.couponCode', 'not_in_contract'],
      ['result.totalPriceUsd', 'type_differs'],
    ]);
  });

  it('derives the spec fields from the zod schema, both claimedTokens shapes, integers as numbers', () => {
    const spec = specFieldsOf('transfer:succeeded');
    expect(spec.get('result.quantity')).toEqual({ types: new Set(['number']), required: true });
    expect(spec.get('result.claimedTokens.tokenIds')?.required).toBe(false);
    expect(spec.has('result.claimedTokens.tokens[].transactionHash')).toBe(true);
    expect(spec.get('result.claimedTokens.transactionHashes.*[]')?.types).toEqual(new Set(['string']));
    expect(specFieldsOf('anything:else').get('result.id')?.required).toBe(true);
    const aggregate = new SchemaAggregate(DEFAULT_LEARN_SETTINGS);
    learn(aggregate, sampleTransferSucceeded());
    // The sample has the spec's map shape of claimedTokens: only the list shape's fields are unobserved.
    expect(compareFields(spec, aggregate.all()[0]!).map((d) => [d.path, d.kind])).toEqual([
      ['result.claimedTokens.tokens', 'not_observed'],
      ['result.claimedTokens.tokens[]', 'not_observed'],
      ['result.claimedTokens.tokens[].tokenId', 'not_observed'],
      ['result.claimedTokens.tokens[].transactionHash', 'not_observed'],
    ]);
    expect(expectedFields({ type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, required: ['a'] }).get('a')).toEqual({ types: new Set(['string', 'null']), required: true });
  });
});

describe('rules a drift touches', () => {
  const rule = (id: string, where: Record<string, unknown>, transform?: string) => ({ id, on: ['transfer:succeeded'], where, transform }) as unknown as RuleDescription;

  it('reads the field paths of a where, through operators', () => {
    expect(wherePaths({ 'result.totalPriceUsd': { $gte: 10 }, $or: [{ 'result.email': { $regex: 'x' } }, { result: { quantity: 2 } }] }).sort()).toEqual(['result', 'result.email', 'result.quantity', 'result.totalPriceUsd']);
  });

  it('names the rules whose where reads the field, and transforms that name it (best effort)', () => {
    const rules = [rule('big', { 'result.totalPriceUsd': { $gte: 100 } }), rule('all', {}), rule('shape', {}, '{ "amount": result.totalPriceUsd }')];
    expect(rulesTouchedBy({ source: 'checkout', event: 'transfer:succeeded', path: 'result.totalPriceUsd' }, rules)).toEqual({ where: ['big'], transform: ['shape'] });
    expect(rulesTouchedBy({ source: 'checkout', event: 'other', path: 'result.totalPriceUsd' }, rules)).toEqual({ where: [], transform: [] });
  });
});
