// The console's router: the part of the URL after '#' picks the page; the query after it holds filters,
// so reloading or sharing a link keeps them.
import { logOut } from './api.js';
import { renderCluster } from './cluster-page.js';
import { renderDeadLetters } from './dead-letters-page.js';
import { renderEventDetail } from './event-page.js';
import { renderEvents } from './events-page.js';
import { renderRules } from './rules-page.js';
import { renderSchema } from './schema-page.js';
import { flash } from './dom.js';

const ROUTES = [
  { pattern: /^\/events\/(\d+)$/, page: 'events', render: (view, match, query) => renderEventDetail(view, Number(match[1]), query) },
  { pattern: /^\/events$/, page: 'events', render: (view, _match, query) => renderEvents(view, query) },
  { pattern: /^\/dead-letters$/, page: 'dead-letters', render: (view, _match, query) => renderDeadLetters(view, query) },
  { pattern: /^\/rules$/, page: 'rules', render: (view, _match, query) => renderRules(view, query) },
  { pattern: /^\/schema$/, page: 'schema', render: (view) => renderSchema(view) },
  { pattern: /^\/cluster$/, page: 'cluster', render: (view) => renderCluster(view) },
];

let cleanup = null;

function currentRoute() {
  const hash = window.location.hash.replace(/^#/, '') || '/events';
  const [path, search = ''] = hash.split('?');
  return { path, query: new URLSearchParams(search) };
}

function show() {
  const view = document.getElementById('view');
  const { path, query } = currentRoute();
  const route = ROUTES.find((candidate) => candidate.pattern.test(path));
  if (!route) {
    window.location.replace('#/events');
    return;
  }
  if (cleanup) cleanup();
  cleanup = null;
  // Each visit renders into a fresh element: answers that arrive after the user moved on land in a
  // detached node instead of the page now shown.
  const page = document.createElement('div');
  view.replaceChildren(page);
  for (const link of document.querySelectorAll('nav a[data-page]')) {
    if (link.dataset.page === route.page) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  try {
    cleanup = route.render(page, route.pattern.exec(path), query) ?? null;
  } catch (err) {
    flash(err.message, 'error');
  }
  window.scrollTo(0, 0);
}

window.addEventListener('hashchange', show);
document.getElementById('logout').addEventListener('click', () => logOut());
show();
