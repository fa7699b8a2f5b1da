// The replay route choice, the same on the event page (one event) and the events page (a bulk replay).
import { h } from './dom.js';

/** `current` (the default) or `original`; `routed` names what the original rules routed ("it", "each event"). */
export function routeSelect(id, routed) {
  return h(
    'select',
    { id, name: 'route' },
    h('option', { value: 'current', text: 'current: the rules as they are now' }),
    h('option', { value: 'original', text: `original: the rules that routed ${routed} when it arrived` }),
  );
}
