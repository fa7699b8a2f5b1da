import type { CompiledRule, RenderedBody, RuleEventInput } from './types.js';

/** What a rule would send for an event: its rendered body, or the event's bytes with why it cannot be rendered. */
export interface RenderOutcome extends RenderedBody {
  /** Set when the transform fails: the delivery is dead-lettered with this reason. */
  deadReason?: string;
}

/**
 * Renders `rule`'s transform over `input` in the transform sandbox, as the delivery loop does before a
 * delivery's first attempt: explain, dry runs and replay previews show what delivery sends.
 */
export async function renderOutcome(rule: Pick<CompiledRule, 'render'>, input: RuleEventInput): Promise<RenderOutcome> {
  try {
    return await rule.render(input);
  } catch (err) {
    // Every transform error says it is one ("transform failed at position 4: ...").
    return { body: input.raw, contentType: 'application/json', deadReason: (err as Error).message ?? String(err) };
  }
}
